import type { Express } from 'express';
import type { Operations } from '@rsd/observability';
import { createBaseApp, finishApp, mountApiDocs, type Logger, type TokenVerifier } from '@rsd/platform';
import type { AccessLogStore, AuthorizationStore, Clock } from '@rsd/ports';
import { authorizationRoutes } from './authorizations/authorization-routes';
import { CONSOLE_PATH } from './console/console-config';
import { consoleRoutes, type ConsoleRoutesDeps } from './console/console-routes';
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
  /** Decisions 30-32: the console's sessions and its sign-in; without them the service has no console (tests of the API alone). */
  console?: Pick<ConsoleRoutesDeps, 'sessions' | 'oidc' | 'claims' | 'publicOrigin'>;
}

export function buildApp(deps: CredentialsAppDeps): Express {
  const { config, store, accessLog, relay, clock, log, verifyToken, operations } = deps;
  const app = createBaseApp({ log, operations });
  mountApiDocs(app, credentialsOpenApi());
  // The API and the console share the use cases and everything they need; only the caller's proof differs.
  const useCases = {
    store,
    usage: accessLog,
    accessLog,
    relay,
    clock,
    log,
    clientIdPrefix: config.CLIENT_ID_PREFIX,
    apiKeyPrefix: config.API_KEY_PREFIX,
    publishDeadlineMs: config.EVENT_LOG_PUBLISH_DEADLINE_MS,
  };
  app.use('/v1', authorizationRoutes({ ...useCases, verifyToken }));
  if (deps.console) app.use(CONSOLE_PATH, consoleRoutes({ ...useCases, ...deps.console }));
  return finishApp(app, log);
}
