import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { labelledRouter, tracedRequests } from '@rsd/observability';
import { ConfigError, createBaseApp, createLogger, finishApp, loadConfig } from '@rsd/platform';
import { eventually } from '@rsd/testkit';
import { startTracing, tracesEndpointOf, tracingConfigSchema, type Tracing } from './tracing';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
const PARENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT_SPAN = 'b7ad6b7169203331';
const API_KEY = 'rsk_live_secretsecretsecret';
const TOKEN = 'clm_tokentokentokentoken';

const silent = createLogger('test', 'silent');
const config = (env: NodeJS.ProcessEnv) => loadConfig(tracingConfigSchema, env);

let running: Tracing | undefined;
let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  server = undefined;
  await running?.shutdown();
  running = undefined;
});

function start(env: NodeJS.ProcessEnv, services: string[], spanProcessor?: SimpleSpanProcessor): Tracing {
  running = startTracing(config(env), { services, log: silent, ...(spanProcessor ? { spanProcessor } : {}) });
  return running;
}

async function listen(listener: RequestListener): Promise<string> {
  server = createServer(listener);
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A service's app as the services build theirs: the base app, a labelled router, the error middleware. */
function anApp(log = silent) {
  const app = createBaseApp({ log });
  const router = labelledRouter();
  router.get('/v1/customers/:clientId/score', (_req, res) => {
    log.info('reading the score');
    res.json({ score: 1 });
  });
  router.post('/claim/:token', (_req, res) => {
    res.locals.loggedUrl = '/claim/[token]';
    res.status(500).json({ error: 'boom' });
  });
  app.use(router);
  return finishApp(app, log);
}

function attributeText(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(spans.map((span) => [span.name, span.attributes, span.resource.attributes, span.events, span.links]));
}

describe('tracing configuration (decision 39)', () => {
  test('when no OTLP endpoint is set, then there is no SDK: no tracer, no context manager, no propagator', () => {
    const tracing = start({}, ['read-api']);

    expect(tracing.enabled).toBe(false);
    expect(tracing.tracerOf('read-api')).toBeUndefined();
    const incoming = propagation.extract(ROOT_CONTEXT, { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` });
    expect(trace.getSpanContext(incoming)).toBeUndefined();
    const marked = ROOT_CONTEXT.setValue(Symbol('mark'), 1);
    expect(context.with(marked, () => context.active())).toBe(ROOT_CONTEXT);
  });

  test('when the SDK is disabled or the exporter is none, then tracing is off whatever the endpoint', () => {
    expect(start({ ...ENDPOINT, OTEL_SDK_DISABLED: 'TRUE' }, ['read-api']).enabled).toBe(false);
    expect(start({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }, ['read-api']).enabled).toBe(false);
    expect(start({ ...ENDPOINT, OTEL_SDK_DISABLED: 'false' }, ['read-api']).enabled).toBe(true);
  });

  test('when the endpoints are given, then the traces endpoint is the signal-specific one as is, else the base one with /v1/traces', () => {
    expect(tracesEndpointOf(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }))).toBe('http://collector:4318/v1/traces');
    expect(
      tracesEndpointOf(
        config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/otlp/traces' }),
      ),
    ).toBe('https://b/otlp/traces');
    expect(tracesEndpointOf(config({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }))).toBeUndefined();
  });

  test('when the variables are malformed, then each is named at once', () => {
    const parse = () =>
      config({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_TRACES_SAMPLER: 'sometimes',
        OTEL_TRACES_SAMPLER_ARG: '2',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment',
      });

    expect(parse).toThrow(ConfigError);
    expect(() => parse()).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT[\s\S]*OTEL_EXPORTER_OTLP_PROTOCOL[\s\S]*OTEL_RESOURCE_ATTRIBUTES[\s\S]*OTEL_TRACES_SAMPLER[\s\S]*OTEL_TRACES_SAMPLER_ARG/,
    );
  });
});

describe('a request as a span', () => {
  test('when a request comes with a traceparent, then its span continues that trace, is named by the route template and holds no key, token, query or path', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = start(
      { ...ENDPOINT, OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test' },
      ['read-api'],
      new SimpleSpanProcessor({ exporter }),
    );
    const base = await listen(tracedRequests(anApp(), tracing.tracerOf('read-api')!));

    const response = await fetch(`${base}/v1/customers/rs_0123456789abcdef/score?apiKey=${API_KEY}`, {
      headers: { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01`, 'x-api-key': API_KEY },
    });
    await response.arrayBuffer();

    const [span] = await waitForSpans(exporter, 1);
    expect(span!.name).toBe('GET /v1/customers/:clientId/score');
    expect(span!.spanContext().traceId).toBe(PARENT_TRACE);
    expect(span!.parentSpanContext?.spanId).toBe(PARENT_SPAN);
    expect(span!.attributes).toEqual({
      'http.request.method': 'GET',
      'http.route': '/v1/customers/:clientId/score',
      'http.response.status_code': 200,
      'url.scheme': 'http',
    });
    expect(span!.resource.attributes).toMatchObject({ 'service.name': 'read-api', 'deployment.environment.name': 'test' });
    expect(attributeText([span!])).not.toMatch(new RegExp(`${API_KEY}|rs_0123456789abcdef|apiKey`));
  });

  test('when a request comes without a traceparent, then a trace starts; a 5xx marks the span an error and the token in the path stays out', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = start(ENDPOINT, ['credentials'], new SimpleSpanProcessor({ exporter }));
    const base = await listen(tracedRequests(anApp(), tracing.tracerOf('credentials')!));

    await (await fetch(`${base}/claim/${TOKEN}?t=${TOKEN}`, { method: 'POST' })).arrayBuffer();
    await (await fetch(`${base}/nothing/${TOKEN}`)).arrayBuffer();

    const [claim, unmatched] = await waitForSpans(exporter, 2);
    expect(claim!.parentSpanContext).toBeUndefined();
    expect(claim!.name).toBe('POST /claim/:token');
    expect(claim!.status.code).toBe(2);
    expect(claim!.attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': '500' });
    expect(unmatched!.name).toBe('GET');
    expect(unmatched!.attributes).toEqual({ 'http.request.method': 'GET', 'http.response.status_code': 404, 'url.scheme': 'http' });
    expect(attributeText([claim!, unmatched!])).not.toContain(TOKEN);
  });

  test('when a method is not one HTTP defines, then the span says _OTHER, not the caller text', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = start(ENDPOINT, ['read-api'], new SimpleSpanProcessor({ exporter }));
    const base = await listen(tracedRequests(anApp(), tracing.tracerOf('read-api')!));

    await (await fetch(`${base}/v1/customers/rs_0123456789abcdef/score`, { method: 'PURGE' })).arrayBuffer();

    const [span] = await waitForSpans(exporter, 1);
    expect(span!.attributes['http.request.method']).toBe('_OTHER');
    expect(span!.name.startsWith('_OTHER')).toBe(true);
  });

  test("when an app is traced, then the wrapper carries the app's own request and response, for the server to make its messages with", () => {
    const tracing = start(ENDPOINT, ['read-api'], new SimpleSpanProcessor({ exporter: new InMemorySpanExporter() }));
    const app = anApp();

    const traced = tracedRequests(app, tracing.tracerOf('read-api')!) as RequestListener & { request?: unknown; response?: unknown };

    expect(traced.request).toBe(app.request);
    expect(traced.response).toBe(app.response);
  });

  test('when several services share a process, then each span carries its own service.name, and OTEL_SERVICE_NAME names only a service alone', async () => {
    const shared = new InMemorySpanExporter();
    const tracing = start(
      { ...ENDPOINT, OTEL_SERVICE_NAME: 'ignored-here' },
      ['read-api', 'notifier'],
      new SimpleSpanProcessor({ exporter: shared }),
    );
    tracing.tracerOf('read-api')!.startSpan('a').end();
    tracing.tracerOf('notifier')!.startSpan('b').end();
    const inShared = shared.getFinishedSpans().map((span) => [span.name, span.resource.attributes['service.name']]);
    await running!.shutdown();

    const alone = new InMemorySpanExporter();
    running = start({ ...ENDPOINT, OTEL_SERVICE_NAME: 'read-api-eu' }, ['read-api'], new SimpleSpanProcessor({ exporter: alone }));
    running.tracerOf('read-api')!.startSpan('c').end();

    expect(inShared).toEqual([
      ['a', 'read-api'],
      ['b', 'notifier'],
    ]);
    expect(alone.getFinishedSpans().map((span) => span.resource.attributes['service.name'])).toEqual(['read-api-eu']);
  });

  test('when the sampler is always_off or the caller sampled out, then no span is recorded', async () => {
    const offExporter = new InMemorySpanExporter();
    const off = start({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'always_off' }, ['read-api'], new SimpleSpanProcessor({ exporter: offExporter }));
    off.tracerOf('read-api')!.startSpan('never').end();
    expect(offExporter.getFinishedSpans()).toEqual([]);
    // Shutting down stops the exporter too (it records nothing more): the sampled-out case gets one of its own.
    await running!.shutdown();
    const exporter = new InMemorySpanExporter();
    const tracing = start(ENDPOINT, ['read-api'], new SimpleSpanProcessor({ exporter }));
    const base = await listen(tracedRequests(anApp(), tracing.tracerOf('read-api')!));

    await (
      await fetch(`${base}/v1/customers/rs_0123456789abcdef/score`, { headers: { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-00` } })
    ).arrayBuffer();
    // A sampled request after it: once its span is exported, a span of the one before would have been too.
    const witnessTrace = 'f'.repeat(32);
    await (
      await fetch(`${base}/v1/customers/rs_0123456789abcdef/score`, { headers: { traceparent: `00-${witnessTrace}-${PARENT_SPAN}-01` } })
    ).arrayBuffer();
    const spans = await waitForSpans(exporter, 1);

    expect(spans.map((span) => span.spanContext().traceId)).toEqual([witnessTrace]);
  });

  test('when a traced request logs, then its lines, the access log among them, carry trace_id and span_id beside the request id', async () => {
    const lines: string[] = [];
    const destination = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString('utf8')), done()) });
    const log = createLogger('read-api', 'info', destination, { traceIds: true });
    const exporter = new InMemorySpanExporter();
    const tracing = start(ENDPOINT, ['read-api'], new SimpleSpanProcessor({ exporter }));
    const base = await listen(tracedRequests(anApp(log), tracing.tracerOf('read-api')!));

    await (
      await fetch(`${base}/v1/customers/rs_0123456789abcdef/score`, { headers: { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` } })
    ).arrayBuffer();
    log.info('outside any request');

    const [span] = await waitForSpans(exporter, 1);
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const ids = { trace_id: PARENT_TRACE, span_id: span!.spanContext().spanId };
    expect(entries.find((entry) => entry.msg === 'reading the score')).toMatchObject(ids);
    expect(entries.find((entry) => entry.msg === 'request completed')).toMatchObject({ ...ids, reqId: expect.any(String) });
    expect(entries.find((entry) => entry.msg === 'outside any request')).not.toHaveProperty('trace_id');
  });
});

// The OTLP exporter itself loads `http` by import(), which jest's CommonJS runtime cannot run: the
// end-to-end test (test/e2e/traces.e2e.test.ts) proves that spans reach a real receiver.

async function waitForSpans(exporter: InMemorySpanExporter, count: number): Promise<ReadableSpan[]> {
  return eventually(() => {
    const spans = exporter.getFinishedSpans();
    if (spans.length < count) throw new Error(`expected ${count} span(s), got ${spans.length}`);
    return [...spans];
  });
}
