import { createServiceMetrics } from '@rsd/observability';
import {
  consoleClientAddressVerifier,
  consoleKeySource,
  CONSOLE_AUDIENCES,
  createOutboxRelay,
  createTokenVerifier,
  openLeaseKeeper,
  secretScanningKeys,
  signingKeysFrom,
  startRetention,
  stopInOrder,
  withConsoleTokens,
  type Logger,
} from '@rsd/platform';
import type { Clock, RunningService, Runtime } from '@rsd/ports';
import { buildApp } from './app';
import type { CredentialsConfig } from './config';
import { createExpiryScheduler } from './expiry/expiry-scheduler';
import { createAccessReviewScheduler } from './access-reviews/access-review-scheduler';
import { accessLogProjection } from './access-log/access-log-projection';
import { AUDITED_TOPICS, auditProjection } from './audit-log/audit-projection';
import { accessAlerts } from './alerts/access-alerts';
import { ERASURE_TOPICS, erasureFeed as erasureFeedOf } from './erasure/erasure-feed';

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
  let leadershipTaken: (takeover: boolean) => void = () => undefined;
  const leader = await openLeaseKeeper(runtime, 'credentials', {
    group: 'credentials-relay',
    names: [RELAY_LEASE],
    clock,
    log,
    config,
    onAcquired: (_name, _fence, takeover) => leadershipTaken(takeover),
    onHeld: (count) => metrics.leasesHeld.set({ work: 'credentials-relay' }, count),
  });
  const isLeader = leader ? () => leader.fenceOf(RELAY_LEASE) !== undefined : undefined;
  const relay = createOutboxRelay({
    store,
    eventLog: runtime.eventLog,
    log,
    ...(isLeader ? { isLeader, onRepublished: (entries: number) => metrics.outboxTakeoverRepublished.inc(entries) } : {}),
  });
  leadershipTaken = (takeover) => {
    log.info({ takeover }, 'this replica now runs the outbox relay and the expiry check');
    if (takeover) relay.tookOver();
    // What the last leader left owed goes out at once.
    void flushOwed();
  };
  const flushOwed = () =>
    relay.flush().catch((error: unknown) => log.warn({ err: error }, 'outbox not yet flushed; the relay keeps trying'));
  if (leader) leader.start();
  // Events still owed from before a restart (or an event-log outage) go out first.
  else await flushOwed();
  relay.start(leader ? config.OUTBOX_LEADER_INTERVAL_MS : config.OUTBOX_RELAY_INTERVAL_MS);
  const expiry = createExpiryScheduler({ store, relay, clock, log, isLeader });
  expiry.start(config.EXPIRY_CHECK_INTERVAL_MS);
  // Decision 54: access reviews fall due under the same lease, so one replica settles each.
  const reviews = createAccessReviewScheduler({ store, relay, clock, log, isLeader });
  reviews.start(config.ACCESS_REVIEW_CHECK_INTERVAL_MS);

  // Decision 21: the access log's store is the runtime's (it closes it), kept current by what follows the stream into it.
  const accessLog = await runtime.openAccessLog({ retentionDays: config.ACCESS_LOG_RETENTION_DAYS });
  const accessStore = await accessLog.openStore();
  const accessFeed = await accessLog.follow(accessLogProjection(accessStore, store, log));
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
  // Decision 21's retention, by date on the embedded runtime (MongoDB's TTL index does it too; FerretDB's has none).
  const pruner = startRetention({
    name: 'pruning the access log',
    log,
    clock,
    retentionDays: config.ACCESS_LOG_RETENTION_DAYS,
    prune: (before, now) => accessStore.prune(before, now),
  });

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
