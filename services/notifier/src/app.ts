import type { Express } from 'express';
import type { Operations } from '@rsd/observability';
import { createBaseApp, finishApp, mountApiDocs, type Logger } from '@rsd/platform';
import { edgePolicy } from '@rsd/recipient-access';
import type { NotifierConfig } from './config';
import { notifierOpenApi } from './openapi';
import { webhookRoutes, type WebhookRoutesDeps } from './webhooks/webhook-routes';

export interface NotifierAppDeps extends WebhookRoutesDeps {
  config: NotifierConfig;
  log: Logger;
  operations?: Operations;
}

/** The notifier without a listening socket: main.ts, the embedded runtime and the tests decide where it listens. */
export function buildApp(deps: NotifierAppDeps): Express {
  const { config, log } = deps;
  // Probes first, ahead of the edge policy, as on the read API.
  const app = createBaseApp({ log, trustProxyHops: config.TRUST_PROXY_HOPS, operations: deps.operations });
  app.use(
    edgePolicy({
      denyCidrs: config.EDGE_DENY_CIDRS,
      allowCidrs: config.EDGE_ALLOW_CIDRS,
      blockedUserAgents: config.EDGE_BLOCKED_USER_AGENTS,
    }),
  );
  mountApiDocs(app, notifierOpenApi(config));
  app.use('/v1', webhookRoutes(deps));
  return finishApp(app, log);
}
