import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { Logger } from 'pino';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The request id: the caller's `x-request-id` when it is a sane token, else a new one. */
export function requestIdOf(res: Response): string | undefined {
  const id: unknown = res.locals.requestId;
  return typeof id === 'string' ? id : undefined;
}

/**
 * One log line per request, when the response is finished: id, method, path, status, duration,
 * client address. No headers, and no query string, so no credential can reach the log.
 *
 * Hand-written rather than pino-http: on the read API's hot path pino-http's per-request child
 * logger and serializers cost about 15% of throughput (see the README's benchmark), for the same
 * fields.
 */
export function accessLog(log: Logger): RequestHandler {
  // Its fields are fixed above and hold no secret, so its lines skip the redaction pass every other line takes.
  const access = log.child({}, { redact: [] });
  return (req, res, next) => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('x-request-id', requestId);
    res.once('finish', () => {
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
function loggedUrlOf(res: Response): string | undefined {
  const url: unknown = res.locals.loggedUrl;
  return typeof url === 'string' ? url : undefined;
}

/** Query strings are dropped from logs: callers sometimes put secrets where they do not belong. */
function withoutQuery(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : `${url.slice(0, q)}?[redacted]`;
}
