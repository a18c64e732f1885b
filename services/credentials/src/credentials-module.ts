import { createServiceMetrics } from '@rsd/observability';
import {
  consoleClientAddressVerifier,
  consoleKeySource,
  CONSOLE_AUDIENCES,
  createTokenVerifier,
  secretScanningKeys,
  signingKeysFrom,
  startRelayUnderLease,
  stopInOrder,
  withConsoleTokens,
  type Logger,
} from '@rsd/platform';
import type { Clock, RunningService, Runtime } from '@rsd/ports';
import { buildApp } from './app';
import type { CredentialsConfig } from './config';
import { createExpiryScheduler } from './expiry/expiry-scheduler';
import { createAccessReviewScheduler } from './access-reviews/access-review-scheduler';
import { AUDITED_TOPICS, auditProjection } from './audit-log/audit-projection';
import { accessAlerts } from './alerts/access-alerts';
import { ERASURE_TOPICS, erasureFeed as erasureFeedOf } from './erasure/erasure-feed';
import { startRetentions } from './retention/retentions';

/** Decision 52: the one lease under which a replica runs the outbox relay, the expiry check and (decision 54) the access reviews' due times. */
const RELAY_LEASE = 'relay';

export interface CredentialsModuleDeps {
  config: CredentialsConfig;
  runtime: Runtime;
  clock: Clock;
  log: Logger;
  /** The runner's: where another service of this process listens (the embedded runtime's console, whose keys verify its tokens). */
  localUrlOf?: (serviceName: string) => string | undefined;
}

export type CredentialsModule = RunningService;

/** The credentials service: authorizations in its own store, their events relayed to the event log, expiry on schedule. */
export async function createCredentialsModule({
  config,
  runtime,
  clock,
  log,
  localUrlOf,
}: CredentialsModuleDeps): Promise<CredentialsModule> {
  const store = await runtime.openAuthorizationStore();
  // Decision 56: the offboardings' records, and the subjects' keys an offboarding or an erasure destroys.
  const offboardings = await runtime.openOffboardingStore();
  const subjectKeys = await runtime.openSubjectKeyStore();
  // Decision 54: the audit trail's view, made from the event log (from its beginning, so it can always be made again).
  const auditLog = await runtime.openAuditLogStore();
  const auditFeed = await runtime.eventLog.subscribe({
    groupId: runtime.auditFeedGroup,
    topics: AUDITED_TOPICS,
    fromBeginning: true,
    // Decision 56: an offboarded organization's late or replayed events bring none of its entries back.
    ...auditProjection(auditLog, log.child({ component: 'audit-log' }), async (organizationId) =>
      Boolean(await offboardings.find(organizationId, clock.now())),
    ),
  });
  const metrics = createServiceMetrics('credentials');
  // Decision 52: where replicas share the store, the relay and the expiry check run on the holder of one lease.
  const { relay, leader, isLeader } = await startRelayUnderLease(runtime, 'credentials', {
    store,
    clock,
    log,
    config,
    group: 'credentials-relay',
    lease: RELAY_LEASE,
    work: 'the outbox relay and the expiry check',
    onHeld: (count) => metrics.leasesHeld.set({ work: 'credentials-relay' }, count),
    onRepublished: (entries) => metrics.outboxTakeoverRepublished.inc(entries),
  });
  const expiry = createExpiryScheduler({ store, relay, clock, log, isLeader });
  expiry.start(config.EXPIRY_CHECK_INTERVAL_MS);
  // Decision 54: access reviews fall due under the same lease, so one replica settles each.
  const reviews = createAccessReviewScheduler({ store, relay, clock, log, isLeader });
  reviews.start(config.ACCESS_REVIEW_CHECK_INTERVAL_MS);

  // Decision 21: the access log's store is the runtime's (it closes it), kept current by what follows the stream into it.
  const accessLog = await runtime.openAccessLog({ retentionDays: config.ACCESS_LOG_RETENTION_DAYS });
  const accessStore = await accessLog.openStore();
  const accessFeed = await accessLog.follow(store);
  // Decision 44: what the reads mean to the organization (first use, new addresses, failures), as alerts.
  const alertFeed = await accessLog.watch(accessAlerts({ store, relay, clock, log: log.child({ component: 'alerts' }) }));
  // Decision 56: this service's purge of an offboarded organization, and every service's word of its own.
  const erasureFeed = await runtime.eventLog.subscribe({
    groupId: runtime.erasureFeedGroup,
    topics: ERASURE_TOPICS,
    fromBeginning: true,
    ...erasureFeedOf({
      eventLog: runtime.eventLog,
      store,
      accessLog: accessStore,
      auditLog,
      offboardings,
      clock,
      log: log.child({ component: 'erasure' }),
    }),
  });
  // Decisions 21 and 56: the access log, the audit trail and the addresses kept for alerts, each for its time.
  const pruner = startRetentions({ config, store, relay, accessLog: accessStore, auditLog, clock, log });

  // Decision 38's claim attempts: counted with the read API's failed authentications where the runtime shares counts (one process, or Redis); else per replica.
  const rateLimitStores = await runtime.rateLimitStores();
  // Decision 51: the console acts for the person signed in to it with tokens of its own key, checked with its public key only.
  const localConsole = localUrlOf?.('console');
  const consoleKeys = consoleKeySource(config, localConsole);
  const app = buildApp({
    config,
    store,
    accessLog: accessStore,
    auditLog,
    relay,
    eventLog: runtime.eventLog,
    offboardings,
    subjectKeys,
    clock,
    log,
    verifyToken: withConsoleTokens(createTokenVerifier(config), consoleKeys, CONSOLE_AUDIENCES.credentials),
    rateLimitStores,
    secretScanningKeys: secretScanningKeys({ url: config.SECRET_SCANNING_KEYS_URL, clock, log }),
    // The runner has resolved them (SIGNING_KEYS_SECRET): configured, or made in the data directory, shared with the read API.
    signingKeys: await signingKeysFrom(config.RESPONSE_SIGNING_KEYS ?? []),
    operations: { metrics, readiness: runtime.readiness() },
    console: { url: config.CONSOLE_PUBLIC_URL ?? localConsole, addressFromConsole: consoleClientAddressVerifier(consoleKeys) },
  });
  return {
    app,
    stop: stopInOrder(
      pruner,
      erasureFeed,
      alertFeed,
      accessFeed,
      auditFeed,
      reviews,
      expiry,
      relay,
      ...(leader ? [leader] : []),
      offboardings,
      auditLog,
      store,
    ),
  };
}
