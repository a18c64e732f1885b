import { context, createTraceState, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { domainEventSchema, EVENT_TYPES, newEvent, TOPICS, type AuthorizationRevoked } from '@rsd/contracts';
import type { EventLog, EventRecord, OutgoingRecord, SubscribeOptions, Subscription } from '@rsd/ports';
import { parseRecord } from './parse-record';
import { tracedEventLog } from './traced-event-log';

const CLIENT_ID = 'rs_tracedclient000001';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor({ exporter });
const provider = new TracerProvider({ spanProcessors: [processor] });
const tracer = provider.getTracer('test');
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => context.setGlobalContextManager(contextManager.enable()));
afterAll(() => context.disable());
afterEach(() => exporter.reset());

const anEventValue = (id: string, extension: Record<string, string> = {}) =>
  JSON.stringify({
    ...newEvent<AuthorizationRevoked>({
      id,
      source: '/credentials',
      time: new Date('2026-03-01T10:00:00.000Z'),
      type: EVENT_TYPES.authorizationRevoked,
      data: { clientId: CLIENT_ID, organizationId: 'org-1', revokedAt: '2026-03-01T10:00:00.000Z', revision: 2 },
    }),
    ...extension,
  });

/** An event log that keeps what is appended and hands records to its one subscriber when told. */
function aFakeLog(options: { failAppends?: boolean } = {}) {
  const appended: OutgoingRecord[] = [];
  let subscriber: SubscribeOptions | undefined;
  const log: EventLog = {
    append: (_topic, records) => {
      if (options.failAppends) return Promise.reject(new Error(`no broker for ${CLIENT_ID}`));
      appended.push(...records);
      return Promise.resolve();
    },
    subscribe: (subscribe) => {
      subscriber = subscribe;
      const subscription: Subscription = {
        caughtUp: Promise.resolve(),
        freshAsOf: () => undefined,
        behindSince: () => undefined,
        close: () => Promise.resolve(),
      };
      return Promise.resolve(subscription);
    },
    close: () => Promise.resolve(),
  };
  const recordOf = (value: string, offset: number): EventRecord => ({
    topic: TOPICS.authorizations,
    partition: 1,
    offset: String(offset),
    key: CLIENT_ID,
    value,
  });
  return {
    log,
    appended,
    deliver: (values: string[]) => {
      const records = values.map(recordOf);
      return subscriber!.handleBatch ? subscriber!.handleBatch(records) : subscriber!.handle(records[0]!);
    },
  };
}

/** The spans ended so far, once the processor has handed them to the exporter (it does so asynchronously). */
async function finishedSpans() {
  await processor.forceFlush();
  return exporter.getFinishedSpans();
}

const callerContext = () =>
  trace.setSpanContext(ROOT_CONTEXT, { traceId: CALLER_TRACE, spanId: CALLER_SPAN, traceFlags: 1, isRemote: true });

describe('a traced event log (decision 39)', () => {
  test("when events are appended within a request's span, then the append is a PRODUCER span of that trace and each event carries its context", async () => {
    const fake = aFakeLog();
    const traced = tracedEventLog(fake.log, tracer, 'kafka');
    const deadLetter = JSON.stringify({ reason: 'not JSON', value: 'x' });

    await context.with(callerContext(), () =>
      traced.append(TOPICS.authorizations, [
        { key: CLIENT_ID, value: anEventValue('e1') },
        { key: CLIENT_ID, value: deadLetter },
      ]),
    );

    const [span] = await finishedSpans();
    expect(span).toMatchObject({
      name: `send ${TOPICS.authorizations}`,
      kind: SpanKind.PRODUCER,
      parentSpanContext: { traceId: CALLER_TRACE, spanId: CALLER_SPAN },
      attributes: {
        'messaging.system': 'kafka',
        'messaging.destination.name': TOPICS.authorizations,
        'messaging.operation.type': 'send',
        'messaging.batch.message_count': 2,
      },
    });
    const stamped = domainEventSchema.parse(JSON.parse(fake.appended[0]!.value));
    expect(stamped.traceparent).toBe(`00-${CALLER_TRACE}-${span!.spanContext().spanId}-01`);
    expect(stamped).toEqual({ ...JSON.parse(anEventValue('e1')), traceparent: stamped.traceparent });
    expect(fake.appended[1]!.value).toBe(deadLetter);
  });

  test('when the caller sent a tracestate, then the events carry it beside the traceparent', async () => {
    const fake = aFakeLog();
    const withState = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: CALLER_TRACE,
      spanId: CALLER_SPAN,
      traceFlags: 1,
      isRemote: true,
      traceState: createTraceState('rojo=00f067aa0ba902b7'),
    });

    await context.with(withState, () =>
      tracedEventLog(fake.log, tracer, 'sqlite').append(TOPICS.authorizations, [{ key: CLIENT_ID, value: anEventValue('e1') }]),
    );

    expect(JSON.parse(fake.appended[0]!.value)).toMatchObject({ tracestate: 'rojo=00f067aa0ba902b7' });
  });

  test('when an append fails, then its span is an error of that kind, without the message, and the caller sees the failure', async () => {
    const traced = tracedEventLog(aFakeLog({ failAppends: true }).log, tracer, 'kafka');

    await expect(traced.append(TOPICS.authorizations, [{ key: CLIENT_ID, value: anEventValue('e1') }])).rejects.toThrow('no broker');

    const [span] = await finishedSpans();
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    expect(span?.attributes['error.type']).toBe('Error');
    expect(JSON.stringify([span?.attributes, span?.events])).not.toContain(CLIENT_ID);
  });

  test('when a consumer handles an event that carries a traceparent, then the handling is a CONSUMER span child of it, and the handler reads the event parsed once', async () => {
    const fake = aFakeLog();
    const seen: { record: EventRecord; spanId: string | undefined }[] = [];
    await tracedEventLog(fake.log, tracer, 'kafka').subscribe({
      groupId: 'read-api-projections',
      topics: [TOPICS.authorizations],
      fromBeginning: true,
      handle: (record) => {
        seen.push({ record, spanId: trace.getActiveSpan()?.spanContext().spanId });
        return Promise.resolve();
      },
    });

    await fake.deliver([anEventValue('e1', { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` })]);

    const [span] = await finishedSpans();
    expect(span).toMatchObject({
      name: `process ${TOPICS.authorizations}`,
      kind: SpanKind.CONSUMER,
      parentSpanContext: { traceId: CALLER_TRACE, spanId: CALLER_SPAN, isRemote: true },
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.consumer.group.name': 'read-api-projections',
        'messaging.destination.partition.id': '1',
        'cloudevents.event_id': 'e1',
        'cloudevents.event_type': EVENT_TYPES.authorizationRevoked,
      },
    });
    expect(seen[0]?.spanId).toBe(span?.spanContext().spanId);
    expect(seen[0]?.record.parsed).toBeDefined();
    expect(parseRecord(seen[0]!.record)).toBe(seen[0]!.record.parsed);
    expect(JSON.stringify(span?.attributes)).not.toContain(CLIENT_ID);
  });

  test('when a batch holds events of two traces and one untraced, then the handling runs once, a span in each trace', async () => {
    const fake = aFakeLog();
    const other = '0af7651916cd43dd8448eb211c80319c';
    let handled = 0;
    await tracedEventLog(fake.log, tracer, 'kafka').subscribe({
      groupId: 'g',
      topics: [TOPICS.authorizations],
      fromBeginning: true,
      handle: () => Promise.reject(new Error('not called for batches')),
      handleBatch: (records) => {
        handled += records.length;
        return Promise.resolve();
      },
    });

    await fake.deliver([
      anEventValue('e1', { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` }),
      anEventValue('e2', { traceparent: `00-${other}-${CALLER_SPAN}-01` }),
      anEventValue('e3', { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` }),
      anEventValue('e4'),
    ]);

    expect(handled).toBe(4);
    const spans = await finishedSpans();
    expect(spans.map((span) => span.spanContext().traceId).sort()).toEqual([other, CALLER_TRACE].sort());
    expect(spans.every((span) => span.attributes['messaging.batch.message_count'] === 4)).toBe(true);
  });

  test('when records carry no trace context (old events, tracing off at append), then they are handled without a span', async () => {
    const fake = aFakeLog();
    let handled = 0;
    await tracedEventLog(fake.log, tracer, 'sqlite').subscribe({
      groupId: 'g',
      topics: [TOPICS.authorizations],
      fromBeginning: true,
      handle: () => {
        handled += 1;
        return Promise.resolve();
      },
    });

    await fake.deliver([anEventValue('e1')]);
    await fake.deliver(['not json']);

    expect(handled).toBe(2);
    expect(await finishedSpans()).toEqual([]);
  });

  test('when the handler fails, then the span is an error and the failure reaches the log, which retries the record', async () => {
    const fake = aFakeLog();
    await tracedEventLog(fake.log, tracer, 'kafka').subscribe({
      groupId: 'g',
      topics: [TOPICS.authorizations],
      fromBeginning: true,
      handle: () => Promise.reject(new TypeError('store away')),
    });

    await expect(fake.deliver([anEventValue('e1', { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` })])).rejects.toThrow('store away');

    const [span] = await finishedSpans();
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    expect(span?.attributes['error.type']).toBe('TypeError');
  });
});
