import { Router, type Express, type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from 'pino';
import type { ReadinessCheck } from '@rsd/ports';
import type { ServiceMetrics } from './service-metrics';

export type { ReadinessCheck };

/**
 * Fails until `caughtUp` resolves: a projection still catching up with what the event log held when
 * it started takes no traffic. The read API's and the notifier's.
 */
export function caughtUpCheck(caughtUp: Promise<unknown>, name = 'projection'): ReadinessCheck {
  let done = false;
  caughtUp.then(
    () => (done = true),
    () => undefined,
  );
  return { name, check: () => (done ? Promise.resolve() : Promise.reject(new Error(`the ${name} is still catching up`))) };
}

export interface Operations {
  metrics: ServiceMetrics;
  readiness: readonly ReadinessCheck[];
}

/** A route label of bounded cardinality: the template, never the raw path (Client IDs are in it). */
export function routeOf(req: Request, res: Response): string {
  const labelled: unknown = res.locals.metricsRoute;
  if (typeof labelled === 'string') return labelled;
  const route = req.route as { path?: unknown } | undefined;
  return typeof route?.path === 'string' ? `${req.baseUrl}${route.path}` : 'unmatched';
}

/** Labels the request with its route's template while the router that holds the route still says where it is mounted. */
const recordRouteTemplate: RequestHandler = (req, res, next) => {
  const route = req.route as { path?: unknown } | undefined;
  if (typeof route?.path === 'string') res.locals.metricsRoute = `${req.baseUrl}${route.path}`;
  next();
};

/**
 * A Router whose every route labels its requests with the full template (`/v1/scores`), errors
 * included. Without it, a request that a route's handler fails is labelled after express has left the
 * router and restored `baseUrl` to the app's: `/scores` for its 4xx beside `/v1/scores` for its 2xx.
 * Express's own `get`, `post` and `all` go through `route`, so overriding it covers every way a route is made.
 */
export function labelledRouter(): Router {
  const router = Router();
  const route = router.route.bind(router);
  router.route = (path: string) => route(path).all(recordRouteTemplate);
  return router;
}

export function httpMetrics(metrics: ServiceMetrics): RequestHandler {
  // One labelled child per (method, route, status), found by one Map lookup: prom-client would
  // otherwise hash the label object twice on every request.
  const children = new Map<string, { requests: { inc(): void }; duration: { observe(seconds: number): void } }>();
  const childrenOf = (method: string, route: string, status: string) => {
    const key = `${method} ${status} ${route}`;
    let child = children.get(key);
    if (!child) {
      const labels = { method, route, status };
      child = { requests: metrics.httpRequests.labels(labels), duration: metrics.httpDuration.labels(labels) };
      children.set(key, child);
    }
    return child;
  };
  return (req, res, next) => {
    const started = performance.now();
    // `on`, not `once`: a response finishes once, and once's wrapper and removal cost every request.
    res.on('finish', () => {
      const child = childrenOf(req.method, routeOf(req, res), String(res.statusCode));
      child.requests.inc();
      child.duration.observe((performance.now() - started) / 1000);
    });
    next();
  };
}

const CHECK_TIMEOUT_MS = 2000;

async function runCheck(check: ReadinessCheck): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check.check(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `/healthz` (the process is alive), `/readyz` (every check passes; the answer names each check but
 * not its error, which goes to the log) and `/metrics`. Mounted first, so probes bypass the API's
 * own policies.
 */
export function mountOperations(app: Express, operations: Operations, log: Logger): void {
  app.use(httpMetrics(operations.metrics));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const results = await Promise.all(
      operations.readiness.map(async (check) => {
        try {
          await runCheck(check);
          return [check.name, 'ok'] as const;
        } catch (error) {
          log.warn({ check: check.name, err: error }, 'readiness check failed');
          return [check.name, 'failing'] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks: Object.fromEntries(results) });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(operations.metrics.registry.contentType).send(await operations.metrics.exposition());
  });
}
