import { randomBytes } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import pino, { type Level, type Logger } from 'pino';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The request id: the caller's `x-request-id` when it is a sane token, else a new one. */
export function requestIdOf(res: Response): string | undefined {
  const id: unknown = res.locals.requestId;
  return typeof id === 'string' ? id : undefined;
}

/**
 * Request ids in the UUID form callers and support staff know, made far more cheaply than by
 * randomUUID, since every read makes one: RFC 9562's version 8, 74 random bits drawn once per
 * process, then a 48-bit count. Unique across processes and restarts as a random UUID is; not
 * unpredictable, which an id that only names a request for the logs need not be.
 */
export function requestIds(): () => string {
  const random = randomBytes(10).toString('hex');
  // Version 8 in the third group's first digit, the variant (binary 10) in the fourth group's.
  const variant = ((parseInt(random[15]!, 16) & 0x3) | 0x8).toString(16);
  const prefix = `${random.slice(0, 8)}-${random.slice(8, 12)}-8${random.slice(12, 15)}-${variant}${random.slice(16, 19)}-`;
  let count = 0;
  return () => prefix + (count++).toString(16).padStart(12, '0');
}

/**
 * One log line per request, when the response is finished: id, method, path, status, duration,
 * client address. No headers, and no query string, so no credential can reach the log.
 *
 * Hand-written rather than pino-http: on the read API's hot path pino-http's per-request child
 * logger and serializers are a sizeable share of a request's cost (docs/decisions/0105-domain-core-views-and-services-as-modules.md), for
 * the same fields.
 */
export function accessLog(log: Logger): RequestHandler {
  // Its fields are fixed above and hold no secret, so its lines skip the redaction pass every other line takes.
  const access = log.child({}, { redact: [] });
  const writeLine = accessLineWriter(access);
  const nextRequestId = requestIds();
  return (req, res, next) => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : nextRequestId();
    res.locals.requestId = requestId;
    res.setHeader('x-request-id', requestId);
    // `on`, not `once`: a response finishes once, and once's wrapper and removal cost every request.
    res.on('finish', () => {
      const entry = {
        reqId: requestId,
        method: req.method,
        url: loggedUrlOf(res) ?? withoutQuery(req.originalUrl),
        status: res.statusCode,
        ms: Math.round((performance.now() - started) * 100) / 100,
        remoteAddress: req.socket.remoteAddress,
      };
      // A 503 is the documented answer while a dependency is away or a replica catches up, which
      // readiness already reports: a warning. Any other 5xx is an error an operator must look at.
      if (res.statusCode === 503) writeLine('warn', entry, 'request refused: service unavailable');
      else if (res.statusCode >= 500) writeLine('error', entry, 'request failed');
      else writeLine('info', entry, 'request completed');
    });
    next();
  };
}

/** An access-log line's own fields (accessLog). */
interface AccessEntry {
  reqId: string;
  method: string;
  url: string;
  status: number;
  ms: number;
  remoteAddress: string | undefined;
}

const { chindingsSym, lsCacheSym, messageKeySym, mixinSym, streamSym, timeSym, needsMetadataGsym, hooksSym, formattersSym } = pino.symbols;

/**
 * Writes an access-log line as the logger would (its level prefix, time, bindings, the active span's
 * ids when tracing is on, then the entry and the message, in that order), serialized here: every
 * read writes one, and pino's pass over an object key by key, escaping each key and value a
 * character at a time, was a few microseconds of a read. The request id passed REQUEST_ID or was made
 * here, the method is an HTTP token, the address an IP address, the rest numbers: only the URL may
 * need escaping, which JSON.stringify does. A logger this does not know how to mirror (a metadata
 * stream, a write hook, a log formatter) writes through pino as before.
 */
function accessLineWriter(access: Logger): (level: Level, entry: AccessEntry, message: string) => void {
  const internals = access as unknown as Record<symbol, unknown>;
  const stream = internals[streamSym] as { write(line: string): void } & Record<symbol, unknown>;
  const hooks = internals[hooksSym] as { streamWrite?: unknown } | undefined;
  const formatters = internals[formattersSym] as { log?: unknown } | undefined;
  if (stream[needsMetadataGsym] === true || hooks?.streamWrite || formatters?.log) {
    return (level, entry, message) => access[level](entry, message);
  }
  const messageKey = JSON.stringify(internals[messageKeySym]);
  return (level, entry, message) => {
    if (!access.isLevelEnabled(level)) return;
    const number = access.levels.values[level] as number;
    // Read at each line, as pino does: the level's prefix, the time, and the bindings (a child's may change).
    let line =
      (internals[lsCacheSym] as Record<number, string>)[number]! +
      (internals[timeSym] as () => string)() +
      (internals[chindingsSym] as string);
    const mixin = internals[mixinSym] as ((object: object, level: number, logger: Logger) => Record<string, unknown>) | undefined;
    if (mixin) {
      for (const [key, value] of Object.entries(mixin(entry, number, access))) {
        if (value !== undefined && !(key in entry)) line += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
      }
    }
    line += `,"reqId":"${entry.reqId}","method":"${entry.method}","url":${JSON.stringify(entry.url)},"status":${entry.status},"ms":${entry.ms}`;
    if (entry.remoteAddress !== undefined) line += `,"remoteAddress":"${entry.remoteAddress}"`;
    stream.write(`${line},${messageKey}:${JSON.stringify(message)}}\n`);
  };
}

/**
 * A route whose path itself holds a secret (a claim link's token, decision 38) names what to log instead,
 * in `res.locals.loggedUrl`, before the response finishes.
 */
export function loggedUrlOf(res: Response): string | undefined {
  const url: unknown = res.locals.loggedUrl;
  return typeof url === 'string' ? url : undefined;
}

/** Query strings are dropped from logs: callers sometimes put secrets where they do not belong. */
function withoutQuery(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : `${url.slice(0, q)}?[redacted]`;
}
