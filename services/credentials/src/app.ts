import type { Express } from 'express';
import type { Operations } from '@rsd/observability';
import { createBaseApp, finishApp, mountApiDocs, type Logger, type TokenVerifier } from '@rsd/platform';
import type { AccessLogStore, AuthorizationStore, Clock } from '@rsd/ports';
import { authorizationRoutes } from './authorizations/authorization-routes';
import type { CredentialsConfig } from './config';
import { credentialsOpenApi } from './openapi';
import type { OutboxRelay } from './outbox/outbox-relay';

export interface CredentialsAppDeps {
  config: CredentialsConfig;
  store: AuthorizationStore;
  /** Decision 21's access log and decision 20's usage counters. */
  accessLog: AccessLogStore;
  relay: OutboxRelay;
  clock: Clock;
  log: Logger;
  verifyToken: TokenVerifier;
  operations?: Operations;
}

export function buildApp({ config, store, accessLog, relay, clock, log, verifyToken, operations }: CredentialsAppDeps): Express {
  const app = createBaseApp({ log, operations });
  mountApiDocs(app, credentialsOpenApi());
  app.use(
    '/v1',
    authorizationRoutes({
      store,
      usage: accessLog,
      accessLog,
      relay,
      clock,
      log,
      verifyToken,
      clientIdPrefix: config.CLIENT_ID_PREFIX,
      apiKeyPrefix: config.API_KEY_PREFIX,
      publishDeadlineMs: config.EVENT_LOG_PUBLISH_DEADLINE_MS,
    }),
  );
  return finishApp(app, log);
}
