import {
  context,
  createTraceState,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import type { DomainEvent } from '@rsd/contracts';
import type { EventLog, EventRecord, OutgoingRecord, SubscribeOptions } from '@rsd/ports';
import { parseRecord } from './parse-record';

// The messaging and CloudEvents conventions' attributes: still incubating, so copied here as the
// semantic-conventions package advises rather than loaded from its incubating entry point.
export const MESSAGING = {
  system: 'messaging.system',
  destination: 'messaging.destination.name',
  partition: 'messaging.destination.partition.id',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  batchCount: 'messaging.batch.message_count',
  consumerGroup: 'messaging.consumer.group.name',
  eventId: 'cloudevents.event_id',
  eventType: 'cloudevents.event_type',
} as const;

/** What `messaging.system` says: Kafka, or the embedded runtime's log in SQLite. */
export type EventLogSystem = 'kafka' | 'sqlite';

/** A CloudEvent as our producers write it (newEvent's first member): the records whose trace context is stamped. */
const CLOUD_EVENT_START = '{"specversion":';

/**
 * The event log of a traced service (decision 39). An append is a PRODUCER span (`send {topic}`),
 * and each CloudEvent it appends carries the span's context as the distributed-tracing extension
 * (`traceparent`, `tracestate`); the span is the child of whatever was active, the score-ingest
 * POST's span for a score. A delivery to a consumer is a CONSUMER span (`process {topic}`), child of
 * the context its event carries, so the projection of a score and the deliveries planned from it are
 * in the trace of its ingest. Records carrying no context (written untraced, or before decision 39)
 * are handled without a span: replaying the whole log into a new view must not start a trace per
 * old event. A batch whose events come from several traces is a span in each, around the one handling.
 *
 * The runner wraps a service's log only when tracing is on: off, a record costs nothing here.
 */
export function tracedEventLog(eventLog: EventLog, tracer: Tracer, system: EventLogSystem): EventLog {
  return {
    append: (topic, records) =>
      tracer.startActiveSpan(
        `send ${topic}`,
        { kind: SpanKind.PRODUCER, attributes: appendAttributes(system, topic, records.length) },
        async (span) => {
          try {
            await eventLog.append(topic, stamped(records, span.spanContext()));
          } catch (error) {
            failed(span, error);
            throw error;
          } finally {
            span.end();
          }
        },
      ),
    subscribe: (options) => eventLog.subscribe(tracedSubscription(options, tracer, system)),
    close: () => eventLog.close(),
  };
}

function appendAttributes(system: EventLogSystem, topic: string, count: number): Attributes {
  return {
    [MESSAGING.system]: system,
    [MESSAGING.destination]: topic,
    [MESSAGING.operationType]: 'send',
    [MESSAGING.operationName]: 'send',
    ...(count > 1 ? { [MESSAGING.batchCount]: count } : {}),
  };
}

/** The W3C `traceparent` of a span context (version 00). */
export function traceparentOf(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * Each CloudEvent with the extension's attributes as its first members: the value is not parsed again
 * (a JSON object may list its members in any order); records of other kinds (dead letters) are left as
 * they are. A value that already names a `traceparent` keeps its own, as JSON.parse keeps a member's last.
 */
function stamped(records: readonly OutgoingRecord[], spanContext: SpanContext): readonly OutgoingRecord[] {
  const tracestate = spanContext.traceState?.serialize();
  const members = `"traceparent":${JSON.stringify(traceparentOf(spanContext))},${tracestate ? `"tracestate":${JSON.stringify(tracestate)},` : ''}`;
  return records.map((record) =>
    record.value.startsWith(CLOUD_EVENT_START) ? { key: record.key, value: `{${members}${record.value.slice(1)}` } : record,
  );
}

function tracedSubscription(options: SubscribeOptions, tracer: Tracer, system: EventLogSystem): SubscribeOptions {
  const { groupId } = options;
  const around = async (records: readonly EventRecord[], run: (records: readonly EventRecord[]) => Promise<void>): Promise<void> => {
    // Parsed once here and handed on: the handler's parseRecord answers from `parsed` instead of parsing again.
    const parsed = records.map((record) => (record.parsed ? record : { ...record, parsed: parseRecord(record) }));
    const events = parsed.flatMap((record) => (record.parsed && 'event' in record.parsed ? [record.parsed.event] : []));
    const parents = new Map<string, Context>();
    for (const event of events) {
      if (event.traceparent !== undefined && !parents.has(event.traceparent)) parents.set(event.traceparent, parentContextOf(event));
    }
    const [first] = parsed;
    if (parents.size === 0 || !first) return run(parsed);
    const attributes: Attributes = {
      [MESSAGING.system]: system,
      [MESSAGING.destination]: first.topic,
      [MESSAGING.partition]: String(first.partition),
      [MESSAGING.operationType]: 'process',
      [MESSAGING.operationName]: 'process',
      [MESSAGING.consumerGroup]: groupId,
      ...(records.length > 1 ? { [MESSAGING.batchCount]: records.length } : {}),
      ...(events.length === 1 && events[0] ? { [MESSAGING.eventId]: events[0].id, [MESSAGING.eventType]: events[0].type } : {}),
    };
    const contexts = [...parents.values()];
    const spans = contexts.map((parent) => tracer.startSpan(`process ${first.topic}`, { kind: SpanKind.CONSUMER, attributes }, parent));
    try {
      // The handling runs once, in the first trace's span: its own spans (an append, a store's calls) go there.
      await context.with(trace.setSpan(contexts[0]!, spans[0]!), () => run(parsed));
    } catch (error) {
      for (const span of spans) failed(span, error);
      throw error;
    } finally {
      for (const span of spans) span.end();
    }
  };
  return {
    ...options,
    handle: (record) => around([record], (records) => options.handle(records[0]!)),
    ...(options.handleBatch
      ? { handleBatch: (records: readonly EventRecord[]) => around(records, (batch) => options.handleBatch!(batch)) }
      : {}),
  };
}

/**
 * The active span's context as the W3C attributes, for work that outlives it (a queued webhook delivery);
 * undefined outside a span, and so always when tracing is off.
 */
export function activeTraceContext(): { traceparent: string; tracestate?: string } | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return undefined;
  const tracestate = spanContext.traceState?.serialize();
  return { traceparent: traceparentOf(spanContext), ...(tracestate ? { tracestate } : {}) };
}

/**
 * The remote context an event carries. Its attributes passed the event's schema (W3C format), so they
 * split as the format says.
 */
export function parentContextOf(event: Pick<DomainEvent, 'traceparent' | 'tracestate'>): Context {
  const { traceparent, tracestate } = event;
  if (traceparent === undefined) return ROOT_CONTEXT;
  const [, traceId = '', spanId = '', flags = '00'] = traceparent.split('-');
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & 0xff,
    isRemote: true,
    ...(tracestate ? { traceState: createTraceState(tracestate) } : {}),
  });
}

/** An error's kind, never its message: a message may quote what it failed on. */
export function failed(span: Span, error: unknown): void {
  span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.constructor.name : 'error');
  span.setStatus({ code: SpanStatusCode.ERROR });
}
