import { randomBytes, randomUUID } from 'node:crypto';
import { signDevToken } from '@rsd/platform';
import { aScoreSubmission, describeWithInfra, request, startWebhookReceiver, type StartedServer, type WebhookReceiver } from '@rsd/testkit';
import { productEnv, startInto, startLoopbackNotifier, stopProduct } from '../support/distributed-product';
import { startDistributedServers } from '../support/distributed-servers';
import { eventually } from '../support/embedded-process';
import {
  allTracesFromJaeger,
  describeWithJaeger,
  expectOneTraceFromIngestToDelivery,
  startJaeger,
  tagOf,
  traceFromJaeger,
  TRACED_SERVICES,
  type JaegerSpan,
  type JaegerTrace,
  type RunningJaeger,
} from '../support/jaeger';
import * as orgAdmin from '../support/organization-admin';
import { freePort } from '../support/raw-http';
import type { ServiceProcess } from '../support/service-process';

// Decision 39 on the distributed runtime: the four services as four processes on real Kafka, a
// MongoDB-compatible server and Redis, exporting to a real receiver (Jaeger). A score posted with a
// `traceparent` is one trace from its ingest through Kafka and the projection to its webhook, with
// the clients' spans of OpenTelemetry's instrumentations (kafkajs, MongoDB, ioredis) inside it; every
// span Jaeger holds is searched for what must never be in one.

const traceIdOf = () => randomBytes(16).toString('hex');
const PARENT_SPAN = 'b7ad6b7169203331';
const traceparent = (traceId: string) => `00-${traceId}-${PARENT_SPAN}-01`;
const QUERY_SECRET = 'q-secret-7c2e0a';

describeWithInfra('kafka', 'traces of the distributed runtime in a real OTLP receiver (Jaeger)', (kafkaTarget) => {
  describeWithJaeger('one trace from a score to its webhook, four processes', () => {
    const runId = randomUUID().slice(0, 8);
    const ORG = `traces-${runId}`;
    const jwtSecret = randomBytes(32).toString('base64url');
    const scoreTrace = traceIdOf();
    const readTrace = traceIdOf();
    const servers: StartedServer[] = [];
    const services: ServiceProcess[] = [];
    const secrets: string[] = [QUERY_SECRET];
    let env: Record<string, string> = {};
    let jaeger: RunningJaeger | undefined;
    let receiver: WebhookReceiver | undefined;
    let clientId = '';

    beforeAll(async () => {
      jaeger = await startJaeger();
      const infra = await startDistributedServers(kafkaTarget(), servers);
      const ports = { credentials: await freePort(), scoreIngest: await freePort(), readApi: await freePort(), notifier: await freePort() };
      env = {
        ...infra,
        OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl,
        ...productEnv({ prefix: 'traces', runId, jwtSecret, ports }, { EVENT_LOG_PUBLISH_DEADLINE_MS: '2000' }),
      };
      secrets.push(jwtSecret);
      const webhookSecretKey = randomBytes(32).toString('base64');
      secrets.push(webhookSecretKey);
      const credentials = await startInto(services, 'credentials', ports.credentials, env);
      const scoreIngest = await startInto(services, 'score-ingest', ports.scoreIngest, env);
      const readApi = await startInto(services, 'read-api', ports.readApi, env);
      const notifier = await startLoopbackNotifier(services, ports.notifier, env, webhookSecretKey);

      const token = await signDevToken(jwtSecret, { org: ORG, scope: 'authorizations:write scores:write' });
      secrets.push(token);
      const credential = await orgAdmin.createAuthorization(credentials.url, ORG, token, {
        recipientType: 'insurance_provider',
        scopes: ['qr_score'],
      });
      clientId = credential.clientId;
      secrets.push(credential.apiKey);
      receiver = await startWebhookReceiver();
      const url = receiver.url;
      const webhook = await eventually(async () => {
        const created = await request<{ secret: string; code?: string }>(`${notifier.url}/v1/customers/${clientId}/webhooks`, {
          method: 'POST',
          headers: { 'x-api-key': credential.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ url, events: ['score.updated'] }),
        });
        // 404 until the notifier's projection has the authorization.
        return created.status === 404 ? undefined : created;
      }, 20_000);
      expect(webhook.status).toBe(201);
      secrets.push(webhook.body.secret);

      const ingested = await request(`${scoreIngest.url}/v1/scores?${QUERY_SECRET}=1`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', traceparent: traceparent(scoreTrace) },
        body: JSON.stringify(aScoreSubmission({ organizationId: ORG, score: 63, scoreDate: new Date().toISOString().slice(0, 10) })),
      });
      expect(ingested.status).toBe(202);
      await eventually(() => Promise.resolve(receiver!.received[0]), 20_000);

      // A read, once the projection has the score: its rate limit is a Redis call within the request's span.
      await eventually(async () => {
        const read = await request(`${readApi.url}/v1/customers/${clientId}/score?apiKey=${credential.apiKey}`, {
          headers: { 'x-api-key': credential.apiKey, traceparent: traceparent(readTrace) },
        });
        return read.status === 200 ? read : undefined;
      }, 20_000);

      // Each process exports what its batch still holds as it stops.
      for (const service of services.reverse()) await service.stop();
      services.length = 0;
    }, 240_000);

    afterAll(async () => {
      for (const service of services) await service.stop();
      await receiver?.close();
      await stopProduct([], [], servers, env);
      await jaeger?.stop();
    }, 60_000);

    const scopeOf = (span: JaegerSpan) => tagOf(span, 'otel.scope.name');
    const serviceOf = (trace: JaegerTrace, span: JaegerSpan) => trace.processes[span.processID]?.serviceName;

    test("when a score is posted with a traceparent, then one trace holds its ingest, the event's append, the read API's projection and the webhook's delivery", async () => {
      const trace = await traceFromJaeger(jaeger!.queryUrl, scoreTrace, { services: TRACED_SERVICES, timeoutMs: 30_000 });

      expectOneTraceFromIngestToDelivery(trace, { parentSpanId: PARENT_SPAN, system: 'kafka' });
    });

    test("when the score's trace is read, then Kafka's produce and MongoDB's writes are client spans in it, children of the project's spans", async () => {
      const trace = await traceFromJaeger(jaeger!.queryUrl, scoreTrace, { services: TRACED_SERVICES, timeoutMs: 30_000 });
      const byId = new Map(trace.spans.map((span) => [span.spanID, span]));
      const parentOf = (span: JaegerSpan) => byId.get(span.references.find((reference) => reference.refType === 'CHILD_OF')?.spanID ?? '');

      const kafkaSend = trace.spans.find(
        (span) => scopeOf(span) === '@opentelemetry/instrumentation-kafkajs' && tagOf(span, 'span.kind') === 'producer',
      );
      expect(kafkaSend).toBeDefined();
      expect(parentOf(kafkaSend!)).toMatchObject({ operationName: 'send rsd.scores.v1' });
      expect(serviceOf(trace, kafkaSend!)).toBe('score-ingest');

      const mongo = trace.spans.filter((span) => scopeOf(span) === '@opentelemetry/instrumentation-mongodb');
      expect(mongo.map((span) => serviceOf(trace, span))).toEqual(expect.arrayContaining(['read-api', 'notifier']));
      // Its statement withheld: the operation and the collection name it.
      for (const span of mongo) {
        expect(tagOf(span, 'db.query.text')).toBeUndefined();
        expect(span.operationName).toMatch(/^[a-z]+ [a-z_]+$/);
      }
    });

    test('when a read comes with a traceparent, then its Redis call (the rate limit) is a client span of its trace, its statement the command name alone', async () => {
      const trace = await traceFromJaeger(jaeger!.queryUrl, readTrace);

      const redis = trace.spans.filter((span) => scopeOf(span) === '@opentelemetry/instrumentation-ioredis');
      expect(redis.length).toBeGreaterThan(0);
      for (const span of redis) expect(String(tagOf(span, 'db.query.text'))).toMatch(/^[A-Za-z]+$/);
    });

    test('when every span Jaeger holds is searched, then no key, token, secret, query string, raw path or Kafka message key is in any', async () => {
      const servicesOf = (traces: JaegerTrace[]) =>
        [...new Set(traces.flatMap((trace) => Object.values(trace.processes).map((process) => process.serviceName)))].sort();
      // The receiver stores what it was sent in batches of its own: every process's last export may take a moment to show.
      const traces = await eventually(async () => {
        const held = await allTracesFromJaeger(jaeger!.queryUrl);
        return servicesOf(held).length === 4 ? held : undefined;
      }, 10_000).catch(() => allTracesFromJaeger(jaeger!.queryUrl));
      const text = JSON.stringify(traces);
      expect(servicesOf(traces)).toEqual(['credentials', 'notifier', 'read-api', 'score-ingest']);

      for (const secret of secrets) expect(text).not.toContain(secret);
      expect(text).not.toContain(`/v1/customers/${clientId}`);
      expect(text).not.toContain(`/v1/organizations/${ORG}`);
      expect(text).not.toContain('apiKey=');
      expect(text).not.toContain('messaging.kafka.message.key');
      for (const value of [receiver!.received[0]?.headers['webhook-signature'], receiver!.received[0]?.headers['webhook-id']]) {
        expect(text).not.toContain(String(value));
      }
    });
  });
});
