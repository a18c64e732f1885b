import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { aScoreSubmission, request, startWebhookReceiver, type WebhookReceiver } from '@rsd/testkit';
import { eventually, REPO_ROOT, type EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import {
  allTracesFromJaeger,
  describeWithJaeger,
  startJaeger,
  traceFromJaeger,
  TRACED_SERVICES,
  type JaegerTrace,
  type RunningJaeger,
} from '../support/jaeger';
import { expectOneTraceFromIngestToDelivery } from '../support/jaeger';
import * as orgAdmin from '../support/organization-admin';

// Decision 39: the embedded runtime exports a span per HTTP request by OTLP to a real receiver —
// Jaeger, built by scripts/otlp-receiver.sh — and continues the caller's trace. The spans are read
// back through Jaeger's query API, and everything it holds is searched for the secrets the requests
// carried.

const ORG = 'traces-org';
const QUERY_SECRET = 'q-secret-4e1d9b';

const traceIdOf = () => randomBytes(16).toString('hex');
const traceparent = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;
const PARENT_SPAN = 'b7ad6b7169203331';

const run = promisify(execFile);

interface Probe {
  /** The OpenTelemetry packages the process had loaded once the runner's tracing had started. */
  loaded: string[];
  /** The trace of the one span it made, when tracing was on. */
  traceId?: string;
}

/** A fresh process that starts the runner's tracing under `env`, makes one span if it can, and stops it. */
async function probe(env: Record<string, string>): Promise<Probe> {
  const script = `
    const { startTracing, tracingConfigSchema } = require('@rsd/runtime');
    const { createLogger, loadConfig } = require('@rsd/platform');
    (async () => {
      const tracing = startTracing(loadConfig(tracingConfigSchema, process.env), { services: ['read-api'], log: createLogger('probe', 'warn') });
      const loaded = new Set(Object.keys(require.cache).flatMap((file) => /\\/node_modules\\/(@opentelemetry\\/[^/]+)\\//.exec(file)?.[1] ?? []));
      const span = tracing.tracerOf('read-api')?.startSpan('probe span');
      span?.end();
      await tracing.shutdown();
      process.stdout.write(JSON.stringify({ loaded: [...loaded].sort(), traceId: span?.spanContext().traceId }));
    })().catch((error) => { process.stderr.write(String(error?.stack ?? error)); process.exit(1); });
  `;
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const { stdout } = await run(process.execPath, ['-e', script], { cwd: REPO_ROOT, env: { ...clean, ...env }, timeout: 60_000 });
  return JSON.parse(stdout) as Probe;
}

describe('tracing off costs no SDK', () => {
  test('when no OTLP endpoint is set, then no module of the SDK or its exporters is loaded; with one, they are', async () => {
    const off = await probe({});
    const on = await probe({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: 'always_off' });

    expect(off.loaded.filter((name) => name !== '@opentelemetry/api' && name !== '@opentelemetry/semantic-conventions')).toEqual([]);
    expect(off.traceId).toBeUndefined();
    expect(on.loaded).toEqual(expect.arrayContaining(['@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-proto']));
  });
});

let jaeger: RunningJaeger | undefined;
let dataDir: string | undefined;
let product: EmbeddedProcess | undefined;
let receiver: WebhookReceiver | undefined;

// Stopping flushes each service's last spans to Jaeger, then stops Jaeger: longer than jest's 20 s on a busy machine.
afterAll(async () => {
  await stopAndRemove(product, dataDir);
  await receiver?.close();
  await jaeger?.stop();
}, 60_000);

describeWithJaeger('traces of the embedded runtime in a real OTLP receiver (Jaeger)', () => {
  const readTrace = traceIdOf();
  const claimTrace = traceIdOf();
  const scoreTrace = traceIdOf();
  const secrets: string[] = [QUERY_SECRET];
  let clientId = '';
  let subscriberClientId = '';
  let claimToken = '';
  let output = '';

  beforeAll(async () => {
    jaeger = await startJaeger();
    ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-traces-', {
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl,
      // The recipient's receiver is on loopback: decision 28's development flag.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    }));
    const token = await devTokenFor(dataDir, ORG);
    secrets.push(token);
    await orgAdmin.postScore(product.urls.scoreIngest, token, aScoreSubmission({ organizationId: ORG }));

    // A claim link: its token is in the path of the claim request.
    const linked = await orgAdmin.createAuthorization<{ clientId: string; apiKey: string; claim: { url: string } }>(
      product.urls.credentials,
      ORG,
      token,
      { recipientType: 'insurance_provider', recipientName: 'Traced Insurance', scopes: ['qr_score'], keyDelivery: 'claimLink' },
    );
    clientId = linked.clientId;
    claimToken = linked.claim.url.split('/').pop() ?? '';
    secrets.push(claimToken);
    const claimed = await request<{ apiKey: string }>(`${linked.claim.url}?${QUERY_SECRET}=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', traceparent: traceparent(claimTrace, PARENT_SPAN) },
      body: '{}',
    });
    expect(claimed.status).toBe(201);
    secrets.push(claimed.body.apiKey);

    const read = await request(
      `${product.urls.readApi}/v1/customers/${clientId}/score?apiKey=${claimed.body.apiKey}&note=${QUERY_SECRET}`,
      {
        headers: { 'x-api-key': claimed.body.apiKey, traceparent: traceparent(readTrace, PARENT_SPAN) },
      },
    );
    expect([200, 400, 404]).toContain(read.status);

    // Decision 42: a link claimed into a new portfolio, whose account key reads a page and a grant's score and is rotated.
    const forAccount = await orgAdmin.createAuthorization<{ clientId: string; apiKey: string; claim: { url: string } }>(
      product.urls.credentials,
      ORG,
      token,
      { recipientType: 'auditor', scopes: ['qr_score'], keyDelivery: 'claimLink' },
    );
    secrets.push(forAccount.claim.url.split('/').pop() ?? '');
    const opened = await request<{ accountKey: string }>(forAccount.claim.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ into: 'account' }),
    });
    expect(opened.status).toBe(201);
    secrets.push(opened.body.accountKey);
    const accountKey = { 'x-api-key': opened.body.accountKey };
    const readApi = product.urls.readApi;
    await eventually(async () =>
      (await request(`${readApi}/v1/portfolio/scores`, { headers: accountKey })).status === 200 ? true : undefined,
    );
    expect((await request(`${product.urls.readApi}/v1/customers/${forAccount.clientId}/score`, { headers: accountKey })).status).toBe(200);
    const rotated = await request<{ accountKey: string }>(`${product.urls.credentials}/v1/portfolio/keys/rotate`, {
      method: 'POST',
      headers: { ...accountKey, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(rotated.status).toBe(201);
    secrets.push(rotated.body.accountKey);

    // A recipient subscribed to score changes, then a score posted with a traceparent: its trace runs to the webhook.
    const subscriber = await orgAdmin.createAuthorization(product.urls.credentials, ORG, token, {
      recipientType: 'insurance_provider',
      scopes: ['qr_score'],
    });
    secrets.push(subscriber.apiKey);
    subscriberClientId = subscriber.clientId;
    receiver = await startWebhookReceiver();
    const webhook = await request<{ secret: string }>(`${product.urls.notifier}/v1/customers/${subscriber.clientId}/webhooks`, {
      method: 'POST',
      headers: { 'x-api-key': subscriber.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['score.updated'] }),
    });
    expect(webhook.status).toBe(201);
    secrets.push(webhook.body.secret);
    const ingested = await request(`${product.urls.scoreIngest}/v1/scores?${QUERY_SECRET}=1`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', traceparent: traceparent(scoreTrace, PARENT_SPAN) },
      body: JSON.stringify(aScoreSubmission({ organizationId: ORG, score: 41, scoreDate: new Date().toISOString().slice(0, 10) })),
    });
    expect(ingested.status).toBe(202);
    const heard = receiver;
    await eventually(() => Promise.resolve(heard.received.length > 0 ? true : undefined), 15_000, 50);
    expect(receiver.received).toHaveLength(1);

    // Stopping exports what the batch still holds: nothing is waited for but the shutdown.
    expect(await product.stop()).toBe(0);
    output = product.output();
  }, 120_000);

  test("when a read comes with a traceparent, then Jaeger holds the read API's span in that trace, child of the caller's, named by the route template", async () => {
    const trace = await traceFromJaeger(jaeger!.queryUrl, readTrace);

    expect(trace.spans).toHaveLength(1);
    const [span] = trace.spans;
    expect(span).toMatchObject({
      operationName: 'GET /v1/customers/:clientId/score',
      references: [{ refType: 'CHILD_OF', traceID: readTrace, spanID: PARENT_SPAN }],
    });
    expect(trace.processes[span!.processID]?.serviceName).toBe('read-api');
    expect(Object.fromEntries(span!.tags.map((tag) => [tag.key, tag.value]))).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v1/customers/:clientId/score',
      'span.kind': 'server',
    });
  });

  test("when a claim link is claimed with a traceparent, then the console's span and the credentials service's are named by the template, not the token, and its event's spans join the trace", async () => {
    const trace = await traceFromJaeger(jaeger!.queryUrl, claimTrace);

    const spans = trace.spans.map((span) => [trace.processes[span.processID]?.serviceName, span.operationName]);
    // The claim page (the console) calls the credentials API in the same trace; the event it writes (the key
    // claimed), published by the outbox within the request, continues the trace to its consumers.
    expect(spans).toEqual(
      expect.arrayContaining([
        ['console', 'POST /claim/:token'],
        ['credentials', 'POST /claim/:token'],
        ['credentials', 'send rsd.authorizations.v1'],
        ['read-api', 'process rsd.authorizations.v1'],
        ['notifier', 'process rsd.authorizations.v1'],
      ]),
    );
    expect(spans.filter(([service, name]) => service === 'credentials' && name?.startsWith('POST'))).toEqual([
      ['credentials', 'POST /claim/:token'],
    ]);
  });

  test("when a score is posted with a traceparent, then one trace holds its ingest, the event's append, the read API's projection and the webhook's delivery", async () => {
    const trace = await traceFromJaeger(jaeger!.queryUrl, scoreTrace, { services: TRACED_SERVICES, timeoutMs: 30_000 });

    expectOneTraceFromIngestToDelivery(trace, { parentSpanId: PARENT_SPAN, system: 'sqlite' });
  });

  test('when every span Jaeger holds is searched, then no key, token, bearer token, query string or raw path is in any', async () => {
    const traces: JaegerTrace[] = await allTracesFromJaeger(jaeger!.queryUrl);
    const services = new Set(traces.flatMap((trace) => Object.values(trace.processes).map((process) => process.serviceName)));
    expect([...services].sort()).toEqual(['console', 'credentials', 'notifier', 'read-api', 'score-ingest']);

    const text = JSON.stringify(traces);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toContain(`/v1/customers/${clientId}`);
    expect(text).not.toContain('apiKey=');
    expect(text).not.toContain(`/v1/organizations/${ORG}`);
    expect(text).not.toContain(`/v1/customers/${subscriberClientId}`);
    expect(text).not.toContain(receiver!.url);
    // The webhook's headers: its signature and id.
    for (const value of [receiver!.received[0]?.headers['webhook-signature'], receiver!.received[0]?.headers['webhook-id']]) {
      expect(text).not.toContain(String(value));
    }
  });

  test('when a traced request is logged, then its access-log line carries the trace and span ids beside the request id', async () => {
    const trace = await traceFromJaeger(jaeger!.queryUrl, readTrace);
    const lines = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);

    const access = lines.find((line) => line.msg !== undefined && line.trace_id === readTrace);
    expect(access).toMatchObject({
      service: 'read-api',
      span_id: trace.spans[0]!.spanID,
      reqId: expect.any(String),
      url: expect.stringContaining('?[redacted]'),
    });
  });

  test('when the protocol is http/json, then the exporter reaches the receiver too (the product above used http/protobuf, the default)', async () => {
    const { traceId } = await probe({
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger!.otlpUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'json-probe',
    });

    const trace = await traceFromJaeger(jaeger!.queryUrl, traceId ?? '');
    expect(trace.spans.map((span) => [trace.processes[span.processID]?.serviceName, span.operationName])).toEqual([
      ['json-probe', 'probe span'],
    ]);
  });
});
