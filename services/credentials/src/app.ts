import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import type { Operations } from '@rsd/observability';
import { createBaseApp, finishApp, mountApiDocs, type Logger, type OutboxRelay, type SigningKeys, type TokenVerifier } from '@rsd/platform';
import type {
  AccessLogStore,
  AuditLogStore,
  AuthorizationStore,
  Clock,
  EventLog,
  OffboardingStore,
  RateLimitStoreFactory,
  SubjectKeyStore,
} from '@rsd/ports';
import { failedAuthenticationLimit } from '@rsd/recipient-access';
import { auditLogRoutes } from './audit-log/audit-log-routes';
import { accessReviewRoutes } from './access-reviews/access-review-routes';
import { authorizationRoutes } from './authorizations/authorization-routes';
import { claimRoutes } from './claims/claim-routes';
import { portfolioRoutes } from './portfolio/portfolio-routes';
import { leakRoutes } from './leaks/leak-routes';
import { erasureRoutes } from './erasure/erasure-routes';
import type { SecretScanningKeys } from '@rsd/platform';
import { CLAIM_PATH } from './claims/claim-url';
import type { CredentialsConfig } from './config';
import { credentialsOpenApi } from '@rsd/api-documents';

export interface CredentialsAppDeps {
  config: CredentialsConfig;
  store: AuthorizationStore;
  /** Decision 21's access log and decision 20's usage counters. */
  accessLog: AccessLogStore;
  /** Decision 54's audit trail, kept current from the event log. */
  auditLog: AuditLogStore;
  relay: OutboxRelay;
  /** Decision 56: where the offboarding and erasure events go (straight to the log: nothing is stored with them). */
  eventLog: Pick<EventLog, 'append'>;
  /** Decision 56: the offboardings' records and the data subjects' keys an erasure destroys. */
  offboardings: OffboardingStore;
  subjectKeys: Pick<SubjectKeyStore, 'destroy'>;
  clock: Clock;
  log: Logger;
  verifyToken: TokenVerifier;
  /** Decision 38: failed claim-link attempts are counted per address in these (the read API's failed-authentication counters where they share a backend). */
  rateLimitStores: RateLimitStoreFactory;
  operations?: Operations;
  /** Decision 54: the response-signing keys (decision 24) access reviews' reports are signed with. */
  signingKeys: SigningKeys;
  /** Decision 43: the keys GitHub signs its secret-scanning reports with. */
  secretScanningKeys: SecretScanningKeys;
  /**
   * Decision 51: the console, a service of its own. Its URL, where the pages printed before answer a
   * redirect, and where claim links point unless CLAIM_LINK_BASE_URL says; the address its claim page
   * vouches for. Without it (tests of the API alone) those paths are the API's alone.
   */
  console?: { url: string | undefined; addressFromConsole: (token: string) => Promise<string | undefined> };
}

/** The console's paths before it had its own service (decisions 30-32). */
const CONSOLE_PATH = '/console';

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
    claimLinkBaseUrl: config.CLAIM_LINK_BASE_URL ?? deps.console?.url,
  };
  app.use('/v1', authorizationRoutes({ ...useCases, verifyToken }));
  app.use('/v1', auditLogRoutes({ auditLog: deps.auditLog, verifyToken }));
  app.use('/v1', accessReviewRoutes({ ...useCases, verifyToken, signingKeys: deps.signingKeys }));
  const limitFailures = failedAuthenticationLimit({
    stores: deps.rateLimitStores,
    limitPerMinute: config.FAILED_AUTH_LIMIT_PER_MINUTE,
    log,
  });
  app.use(
    CLAIM_PATH,
    claimRoutes({
      ...useCases,
      newEventId: randomUUID,
      limitFailures,
      consoleUrl: deps.console?.url,
      addressFromConsole: deps.console?.addressFromConsole ?? (() => Promise.resolve(undefined)),
    }),
  );
  app.use('/v1/portfolio', portfolioRoutes({ ...useCases, limitFailures }));
  // Decision 56: offboarding and erasure.
  const erasure = erasureRoutes({
    ...useCases,
    auditLog: deps.auditLog,
    eventLog: deps.eventLog,
    offboardings: deps.offboardings,
    subjectKeys: deps.subjectKeys,
    verifyToken,
    limitFailures,
  });
  app.use('/v1', erasure.organizations);
  app.use('/v1/portfolio', erasure.portfolio);
  app.use(
    '/v1',
    leakRoutes({ ...useCases, apiKeyPrefix: config.API_KEY_PREFIX, secretScanningKeys: deps.secretScanningKeys, limitFailures }),
  );
  const consoleUrl = deps.console?.url;
  if (consoleUrl !== undefined) {
    // Decision 51: every console URL printed before (sign-in links, bookmarks) keeps working, on the console.
    app.use(CONSOLE_PATH, (req, res) => res.redirect(308, `${consoleUrl.replace(/\/+$/, '')}${req.originalUrl}`));
  }
  return finishApp(app, log);
}
