import { context, trace } from '@opentelemetry/api';
import pino, { type Bindings, type DestinationStream, type Logger } from 'pino';
import { isoInstants } from './iso-instants';

export type { Bindings, Logger } from 'pino';

/**
 * Secrets never reach a log: the key header, bearer tokens and any `apiKey` field are censored
 * wherever they appear in a logged object.
 */
export const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
  'apiKey',
  '*.apiKey',
  '*.*.apiKey',
  'token',
  '*.token',
];

export interface LoggerOptions {
  /** Tracing is on (decision 39): a line written within a span carries `trace_id` and `span_id`. */
  traceIds?: boolean;
}

/** A service's root logger: every line carries `service` once (no `name`, which would repeat it). */
export function createLogger(service: string, level: string, destination?: DestinationStream, options: LoggerOptions = {}): Logger {
  const isoOf = isoInstants();
  return pino(
    {
      level,
      base: { service },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      // pino's isoTime, the same text, without formatting a date per line.
      timestamp: () => `,"time":"${isoOf(Date.now())}"`,
      // Only with tracing on: otherwise a line costs no lookup of a span.
      ...(options.traceIds ? { mixin: traceIdsOfActiveSpan } : {}),
    },
    destination ?? stdoutDestination(),
  );
}

/** The W3C ids of the span the line is written in, in the names the OpenTelemetry log data model gives them. */
function traceIdsOfActiveSpan(): object {
  const span = trace.getSpan(context.active());
  // A new object each time: pino merges the line's own fields into it.
  if (span === undefined) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/**
 * Standard output, written asynchronously: while one write is in flight the next lines gather and
 * go out together, so a busy service makes one write per batch instead of one per line, whose
 * system calls would be a large share of its CPU. An idle service still writes each line at once.
 * pino flushes what is pending when the process exits.
 */
function stdoutDestination(): DestinationStream {
  return pino.destination({ dest: 1, sync: false });
}

const { chindingsSym } = pino.symbols;

/** The fields a logger writes into every line, as pino serialized them; of a repeated key the last wins. */
function boundFields(log: Logger): Record<string, unknown> {
  const serialized: unknown = Reflect.get(log, chindingsSym);
  if (typeof serialized !== 'string' || serialized === '') return {};
  return JSON.parse(`{${serialized.slice(1)}}`) as Record<string, unknown>;
}

/**
 * A child logger whose bindings replace the parent's of the same name. pino's own `child` appends,
 * so a re-bound key (`service`, `component`) would be written twice in every line, and JSON readers
 * disagree on which one counts.
 */
export function childLogger(parent: Logger, bindings: Bindings): Logger {
  const inherited = boundFields(parent);
  if (!Object.keys(bindings).some((key) => Object.hasOwn(inherited, key))) return parent.child(bindings);
  const child = parent.child({});
  // pino.symbols is pino's documented integration point; setBindings appends to what is there.
  Reflect.set(child, chindingsSym, '');
  child.setBindings({ ...inherited, ...bindings });
  return child;
}

/** For a process that hosts several services (the embedded runtime): the same logger, another `service`. */
export function serviceLogger(parent: Logger, service: string): Logger {
  return childLogger(parent, { service });
}
