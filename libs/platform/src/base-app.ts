import { isUtf8 } from 'node:buffer';
import express, { type Express, type RequestHandler } from 'express';
import { createServiceMetrics, mountOperations, type Operations } from '@rsd/observability';
import type { Logger } from 'pino';
import { accessLog } from './access-log';
import { ApiError } from './errors';
import { errorHandler, routeNotFound } from './http-errors';

export interface BaseAppOptions {
  log: Logger;
  /** Number of proxy hops in front of the service whose X-Forwarded-For is trusted (0: none). */
  trustProxyHops?: number;
  /** Metrics and readiness checks; tests may leave them out (then /readyz has nothing to check). */
  operations?: Operations;
}

/**
 * Shared front half of every service: /healthz, /readyz and /metrics, request ids, access log, no
 * fingerprinting headers.
 */
export function createBaseApp({ log, trustProxyHops = 0, operations }: BaseAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', trustProxyHops);
  // Decision 33: no response of any service may be sniffed into another type, probes and errors included.
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  mountOperations(app, operations ?? { metrics: createServiceMetrics('unnamed'), readiness: [] }, log);
  app.use(accessLog(log));
  return app;
}

/** Back half: JSON 404 for unknown paths, then the one error middleware. */
export function finishApp(app: Express, log: Logger): Express {
  app.use(routeNotFound);
  app.use(errorHandler(log));
  return app;
}

/** JSON bodies only, UTF-8 only, bounded in size. */
/** A body of another type than JSON is refused (415) before it is read; no body at all passes. */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  next(
    hasBody && !req.is('application/json')
      ? new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json')
      : undefined,
  );
};

export function jsonBody(limit: string): RequestHandler[] {
  const parse = express.json({
    limit,
    strict: true,
    verify: (_req, _res, buffer) => {
      if (!isUtf8(buffer)) throw new Error('body is not UTF-8');
    },
  });
  return [requireJsonBody, parse];
}
