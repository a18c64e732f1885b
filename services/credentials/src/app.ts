import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import type { Operations } from '@rsd/observability';
import { createBaseApp, finishApp, mountApiDocs, type Logger, type TokenVerifier } from '@rsd/platform';
import type { AccessLogStore, AuditLogStore, AuthorizationStore, Clock, RateLimitStoreFactory } from '@rsd/ports';
import { failedAuthenticationLimit } from '@rsd/recipient-access';
import { auditLogRoutes } from './audit-log/audit-log-routes';
import { authorizationRoutes } from './authorizations/authorization-routes';
import { claimRoutes } from './claims/claim-routes';
import { portfolioRoutes } from './portfolio/portfolio-routes';
import { leakRoutes } from './leaks/leak-routes';
import type { SecretScanningKeys } from './leaks/secret-scanning-keys';
import { CLAIM_PATH } from './claims/claim-url';
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
  /** Decision 54's audit trail, kept current from the event log. */
  auditLog: AuditLogStore;
  relay: OutboxRelay;
  clock: Clock;
  log: Logger;
  verifyToken: TokenVerifier;
  /** Decision 38: failed claim-link attempts are counted per address in these (the read API's failed-authentication counters where they share a backend). */
  rateLimitStores: RateLimitStoreFactory;
  operations?: Operations;
  /** Decision 43: the keys GitHub signs its secret-scanning reports with. */
  secretScanningKeys: SecretScanningKeys;
  /** Decisions 30-32: the console's sessions and its sign-in; without them the service has no console (tests of the API alone). */
  console?: Pick<ConsoleRoutesDeps, 'sessions' | 'oidc' | 'claims' | 'publicOrigin' | 'alertWebhooks'>;
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
    claimLinkBaseUrl: config.CLAIM_LINK_BASE_URL,
  };
  app.use('/v1', authorizationRoutes({ ...useCases, verifyToken }));
  app.use('/v1', auditLogRoutes({ auditLog: deps.auditLog, verifyToken }));
  const limitFailures = failedAuthenticationLimit({
    stores: deps.rateLimitStores,
    limitPerMinute: config.FAILED_AUTH_LIMIT_PER_MINUTE,
    log,
  });
  app.use(CLAIM_PATH, claimRoutes({ ...useCases, newEventId: randomUUID, limitFailures, publicOrigin: deps.console?.publicOrigin }));
  app.use('/v1/portfolio', portfolioRoutes({ ...useCases, limitFailures }));
  app.use(
    '/v1',
    leakRoutes({ ...useCases, apiKeyPrefix: config.API_KEY_PREFIX, secretScanningKeys: deps.secretScanningKeys, limitFailures }),
  );
  if (deps.console) app.use(CONSOLE_PATH, consoleRoutes({ ...useCases, ...deps.console }));
  return finishApp(app, log);
}
