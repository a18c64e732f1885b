import type { Express } from 'express';
import { createBaseApp, finishApp, mountApiDocs, type Logger } from '@rsd/platform';
import type { Clock, RateLimitStoreFactory, ReadViews } from '@rsd/ports';
import { edgePolicy } from './access/edge-policy';
import type { ReadApiConfig } from './config';
import { customerRouter } from './customers/customer-router';
import { readApiOpenApi } from './openapi';

export interface ReadApiDeps {
  config: ReadApiConfig;
  views: ReadViews;
  rateLimitStores: RateLimitStoreFactory;
  clock: Clock;
  log: Logger;
}

/** The read API without a listening socket: main.ts and the tests decide where it listens. */
export function buildApp(deps: ReadApiDeps): Express {
  const { config, log } = deps;
  const app = createBaseApp({ log, trustProxyHops: config.TRUST_PROXY_HOPS });
  // Ahead of the edge policy: an orchestrator's probe must not depend on the caller lists.
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.use(
    edgePolicy({
      denyCidrs: config.EDGE_DENY_CIDRS,
      allowCidrs: config.EDGE_ALLOW_CIDRS,
      blockedUserAgents: config.EDGE_BLOCKED_USER_AGENTS,
    }),
  );
  mountApiDocs(app, readApiOpenApi(config));
  app.use('/v1/customers', customerRouter(deps));
  return finishApp(app, log);
}
