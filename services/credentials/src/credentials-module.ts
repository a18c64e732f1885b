import { createServiceMetrics } from '@rsd/observability';
import { createTokenVerifier, stopInOrder, type Logger } from '@rsd/platform';
import type { Clock, RunningService, Runtime } from '@rsd/ports';
import { buildApp } from './app';
import type { CredentialsConfig } from './config';
import { createExpiryScheduler } from './expiry/expiry-scheduler';
import { createOutboxRelay } from './outbox/outbox-relay';
import { accessLogProjection } from './access-log/access-log-projection';
import { auditProjection } from './audit-log/audit-projection';
import { TOPICS } from '@rsd/contracts';
import { accessAlerts } from './alerts/access-alerts';
import { startAccessLogPruner } from './access-log/access-log-pruner';
import { CONSOLE_PATH, oidcSettingsOf } from './console/console-config';
import { createConsoleSessions } from './console/console-sessions';
import { createOidcSignIn } from './console/oidc-sign-in';
import { secretScanningKeys } from './leaks/secret-scanning-keys';
import { alertWebhookAccess, type AlertWebhookAccess } from './console/alert-webhooks';

export interface CredentialsModuleDeps {
  config: CredentialsConfig;
  runtime: Runtime;
  clock: Clock;
  log: Logger;
  /** The runner's: where another service of this process listens (the console finds the embedded runtime's notifier so). */
  localUrlOf?: (serviceName: string) => string | undefined;
}

export interface CredentialsModule extends RunningService {
  /**
   * Decision 31: a sign-in link to the console for one organization's administrator, valid once for
   * 10 minutes; the embedded runtime prints one at start. The path and query to append to the service's URL.
   */
  consoleSignInLink: (organizationId: string) => Promise<string>;
}

/** The credentials service: authorizations in its own store, their events relayed to the event log, expiry on schedule. */
export async function createCredentialsModule({
  config,
  runtime,
  clock,
  log,
  localUrlOf,
}: CredentialsModuleDeps): Promise<CredentialsModule> {
  const store = await runtime.openAuthorizationStore();
  // Decision 54: the audit trail's view, made from the event log (from its beginning, so it can always be made again).
  const auditLog = await runtime.openAuditLogStore();
  const auditFeed = await runtime.eventLog.subscribe({
    groupId: 'credentials-audit',
    topics: [TOPICS.authorizations],
    fromBeginning: true,
    ...auditProjection(auditLog, log.child({ component: 'audit-log' })),
  });
  // Events still owed from before a restart (or an event-log outage) go out first.
  const relay = createOutboxRelay({ store, eventLog: runtime.eventLog, log });
  await relay.flush().catch((error: unknown) => log.warn({ err: error }, 'outbox not yet flushed; the relay keeps trying'));
  relay.start(config.OUTBOX_RELAY_INTERVAL_MS);
  const expiry = createExpiryScheduler({ store, relay, clock, log });
  expiry.start(config.EXPIRY_CHECK_INTERVAL_MS);

  // Decision 21: the access log's store is the runtime's (it closes it), kept current by what follows the stream into it.
  const accessLog = await runtime.openAccessLog({ retentionDays: config.ACCESS_LOG_RETENTION_DAYS });
  const accessStore = await accessLog.openStore();
  const accessFeed = await accessLog.follow(accessLogProjection(accessStore, log));
  // Decision 44: what the reads mean to the organization (first use, new addresses, failures), as alerts.
  const alertFeed = await accessLog.watch(accessAlerts({ store, relay, clock, log: log.child({ component: 'alerts' }) }));
  const pruner = startAccessLogPruner({ store: accessStore, retentionDays: config.ACCESS_LOG_RETENTION_DAYS, clock, log });

  const consoleState = await runtime.openConsoleStateStore();
  const sessions = createConsoleSessions(clock, consoleState);
  const oidcSettings = oidcSettingsOf(config);
  // Decision 38's claim attempts: counted with the read API's failed authentications where the runtime shares counts (one process, or Redis); else per replica.
  const rateLimitStores = await runtime.rateLimitStores();
  const alertWebhooks = consoleAlertWebhooks(config, localUrlOf, log);
  const app = buildApp({
    config,
    store,
    accessLog: accessStore,
    auditLog,
    relay,
    clock,
    log,
    verifyToken: createTokenVerifier(config),
    rateLimitStores,
    secretScanningKeys: secretScanningKeys({ url: config.SECRET_SCANNING_KEYS_URL, clock, log }),
    operations: { metrics: createServiceMetrics('credentials'), readiness: runtime.readiness() },
    console: {
      sessions,
      oidc: oidcSettings && createOidcSignIn(oidcSettings, log),
      publicOrigin: oidcSettings?.redirectUri.origin,
      claims: { organizationClaim: config.CONSOLE_OIDC_ORGANIZATION_CLAIM, permissionsClaim: config.CONSOLE_OIDC_PERMISSIONS_CLAIM },
      alertWebhooks,
    },
  });
  return {
    app,
    consoleSignInLink: async (organizationId) => {
      const token = await sessions.issueLink({ organizationId, subject: 'one-time-link', displayName: 'the administrator' });
      return `${CONSOLE_PATH}/sign-in/link?token=${token}`;
    },
    stop: stopInOrder(pruner, alertFeed, accessFeed, auditFeed, expiry, relay, consoleState, auditLog, store),
  };
}

/**
 * The console manages the organization's alert webhooks on the notifier named by NOTIFIER_URL, or on
 * the one this process runs (the embedded runtime), with the secret both share; without either, it
 * says where they are managed instead.
 */
function consoleAlertWebhooks(
  config: CredentialsConfig,
  localUrlOf: CredentialsModuleDeps['localUrlOf'],
  log: Logger,
): AlertWebhookAccess | undefined {
  const notifierUrl = config.NOTIFIER_URL ?? localUrlOf?.('notifier');
  const secret = config.CONSOLE_NOTIFIER_SECRET;
  if (notifierUrl && secret) return alertWebhookAccess({ notifierUrl, secret, log });
  if (config.NOTIFIER_URL) log.warn('NOTIFIER_URL is set without CONSOLE_NOTIFIER_SECRET: the console does not manage alert webhooks');
  return undefined;
}
