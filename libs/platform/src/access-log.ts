import { randomBytes } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { Logger } from 'pino';

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
      if (res.statusCode === 503) access.warn(entry, 'request refused: service unavailable');
      else if (res.statusCode >= 500) access.error(entry, 'request failed');
      else access.info(entry, 'request completed');
    });
    next();
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
