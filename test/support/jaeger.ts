import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, REPO_ROOT } from './embedded-process';
import { freePort } from './raw-http';

/*
 * A real OTLP receiver for the tracing suites (decision 39): Jaeger v2, the binary that
 * scripts/otlp-receiver.sh builds, on its configuration (scripts/infra/jaeger/config.yaml), on free
 * loopback ports of the suite's own, its traces in memory.
 */
export const JAEGER_BIN = process.env.JAEGER_BIN ?? join(REPO_ROOT, '.infra/bin/jaeger');
const CONFIG = join(REPO_ROOT, 'scripts/infra/jaeger/config.yaml');

const required = () => ['1', 'true'].includes(process.env.REQUIRE_INFRA ?? '');

/**
 * `describe` when the Jaeger binary is there, else a skipped describe with one line saying how to build
 * it — unless REQUIRE_INFRA is set (CI), where a missing receiver is a failure, as for the other servers.
 */
export function describeWithJaeger(name: string, body: () => void): void {
  if (!existsSync(JAEGER_BIN) && !required()) {
    process.stderr.write(`[infra] skipping "${name}": no Jaeger at ${JAEGER_BIN} (build it: scripts/otlp-receiver.sh install)\n`);
    describe.skip(name, body);
    return;
  }
  describe(name, body);
}

export interface RunningJaeger {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT: OTLP over HTTP. */
  otlpUrl: string;
  /** The query API (`/api/traces/{id}`) and the UI. */
  queryUrl: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startJaeger(timeoutMs = 30_000): Promise<RunningJaeger> {
  if (!existsSync(JAEGER_BIN))
    throw new Error(`REQUIRE_INFRA is set but there is no Jaeger at ${JAEGER_BIN}: scripts/otlp-receiver.sh install`);
  const [otlpHttp, otlpGrpc, query, queryGrpc] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const child = spawn(JAEGER_BIN, ['--config', CONFIG], {
    env: {
      ...process.env,
      OTLP_HTTP_PORT: String(otlpHttp),
      OTLP_GRPC_PORT: String(otlpGrpc),
      JAEGER_QUERY_PORT: String(query),
      JAEGER_QUERY_GRPC_PORT: String(queryGrpc),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((done) => child.once('close', () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };

  const queryUrl = `http://127.0.0.1:${query}`;
  let exitedEarly = false;
  await eventually(async () => {
    exitedEarly = child.exitCode !== null;
    const answered = await fetch(`${queryUrl}/api/services`).then(
      (res) => res.ok,
      () => false,
    );
    // The query API starts last: once it answers, the OTLP receiver takes spans. A Jaeger that exited answers never.
    return (answered && output.includes('Everything is ready')) || exitedEarly ? true : undefined;
  }, timeoutMs).catch(async () => {
    await stop();
    throw new Error(`Jaeger did not answer within ${timeoutMs} ms:\n${output}`);
  });
  if (exitedEarly) throw new Error(`Jaeger exited with ${child.exitCode}:\n${output}`);
  return { otlpUrl: `http://127.0.0.1:${otlpHttp}`, queryUrl, output: () => output, stop };
}

/** A span as Jaeger's query API (`/api/traces`) shows it. */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; traceID: string; spanID: string }[];
  tags: { key: string; value: unknown }[];
  processID: string;
}

export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: { key: string; value: unknown }[] }>;
}

/** The trace, once Jaeger holds it (its spans arrive in batches), or an error after `timeoutMs`. */
export async function traceFromJaeger(
  queryUrl: string,
  traceId: string,
  { timeoutMs = 15_000, services = [] }: { timeoutMs?: number; services?: readonly string[] } = {},
): Promise<JaegerTrace> {
  let partial: JaegerTrace | undefined;
  const complete = await eventually(
    async () => {
      const res = await fetch(`${queryUrl}/api/traces/${traceId}`);
      if (!res.ok) return void (await res.arrayBuffer());
      const [found] = ((await res.json()) as { data: JaegerTrace[] | null }).data ?? [];
      // Jaeger stores what each process exports as it arrives, in batches of its own: a trace of several
      // processes can be read before the last one's spans are in. Complete when every named service is.
      const present = new Set(Object.values(found?.processes ?? {}).map((process) => process.serviceName));
      partial = found ?? partial;
      return found && services.every((service) => present.has(service)) ? found : undefined;
    },
    timeoutMs,
    200,
  ).catch(() => partial);
  if (!complete) throw new Error(`trace ${traceId} not in Jaeger after ${timeoutMs} ms`);
  return complete;
}

/** Every trace Jaeger holds of every service, as its query API gives them. */
export async function allTracesFromJaeger(queryUrl: string): Promise<JaegerTrace[]> {
  const services = ((await (await fetch(`${queryUrl}/api/services`)).json()) as { data: string[] | null }).data ?? [];
  const traces: JaegerTrace[] = [];
  for (const service of services) {
    const res = await fetch(`${queryUrl}/api/traces?service=${encodeURIComponent(service)}&limit=10000&lookback=1h`);
    traces.push(...(((await res.json()) as { data: JaegerTrace[] | null }).data ?? []));
  }
  return traces;
}

/** A tag's value on a span, as Jaeger shows it. */
export const tagOf = (span: JaegerSpan, key: string): unknown => span.tags.find((tag) => tag.key === key)?.value;

/** The services a score's trace crosses, from its ingest to its webhook's delivery. */
export const TRACED_SERVICES = ['score-ingest', 'read-api', 'notifier'] as const;

/** The spans of the project's own tracers (the runner's), not those of OpenTelemetry's instrumentations. */
const OWN_SCOPE = '@rsd/runtime';

/**
 * Decision 39's proof: in `trace`, the caller's `parentSpanId` is the parent of score ingest's request
 * span; the event's append (PRODUCER) is its child; the read API's projection and the notifier's
 * planning (CONSUMER) are the append's children, as the event's `traceparent` says; and the webhook's
 * delivery attempt (CLIENT) is the child of the notifier's planning.
 */
export function expectOneTraceFromIngestToDelivery(
  trace: JaegerTrace,
  { parentSpanId, system }: { parentSpanId: string; system: string },
): void {
  const serviceOf = (span: JaegerSpan) => trace.processes[span.processID]?.serviceName;
  const ours = (service: string, operation: string, group?: RegExp) => {
    const found = trace.spans.filter(
      (span) =>
        serviceOf(span) === service &&
        span.operationName === operation &&
        tagOf(span, 'otel.scope.name') === OWN_SCOPE &&
        (group === undefined || group.test(String(tagOf(span, 'messaging.consumer.group.name')))),
    );
    expect(found.map((span) => `${service} ${span.operationName}`)).toEqual([`${service} ${operation}`]);
    return found[0]!;
  };
  const parentOf = (span: JaegerSpan) => span.references.find((reference) => reference.refType === 'CHILD_OF')?.spanID;

  const ingest = ours('score-ingest', 'POST /v1/scores');
  const append = ours('score-ingest', 'send rsd.scores.v1');
  // A read-API replica of the distributed runtime also follows the log for its cache (its change feed): another group.
  const projection = ours('read-api', 'process rsd.scores.v1', /^read-api-projections/);
  const planning = ours('notifier', 'process rsd.scores.v1');
  const delivery = ours('notifier', 'POST');

  expect(parentOf(ingest)).toBe(parentSpanId);
  expect(parentOf(append)).toBe(ingest.spanID);
  expect(parentOf(projection)).toBe(append.spanID);
  expect(parentOf(planning)).toBe(append.spanID);
  expect(parentOf(delivery)).toBe(planning.spanID);
  expect([append, projection, planning, delivery].map((span) => tagOf(span, 'span.kind'))).toEqual([
    'producer',
    'consumer',
    'consumer',
    'client',
  ]);
  expect(tagOf(append, 'messaging.system')).toBe(system);
  expect(tagOf(projection, 'cloudevents.event_type')).toBe('com.resiliencescore.score.calculated.v1');
  expect(tagOf(delivery, 'http.request.method')).toBe('POST');
  expect(tagOf(delivery, 'http.response.status_code')).toBe(204);
}
