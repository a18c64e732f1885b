import { hostname } from 'node:os';
import { READ_VIEWS } from '@rsd/domain';
import { caughtUpCheck, createServiceMetrics, type ReadinessCheck } from '@rsd/observability';
import { every, inOrder, type Logger } from '@rsd/platform';
import type { Clock, Subscription, ViewStore } from '@rsd/ports';
import type { RunningService, Runtime } from '@rsd/runtime';
import { buildApp } from './app';
import type { ReadApiConfig } from './config';
import { DEFAULT_PROJECTION_GROUP_ID, startProjections } from './projections/projection-runner';
import { createCachedViewStore } from './views/cached-view-store';
import type { ResponseSigner } from './signing/response-signer';
import { signingKeysFrom } from './signing/signing-keys';
import { feedStaleness, NEVER_STALE, type FeedStaleness } from './views/feed-staleness';
import { startChangeFeed } from './views/view-change-feed';
import { ACCESS_LOG_STOP_DEADLINE_MS, startAccessRecording } from './access-log/access-recording';

export interface ReadApiModuleDeps {
  config: ReadApiConfig & { READ_VIEWS_DB: string };
  runtime: Runtime;
  clock: Clock;
  log: Logger;
  /** Default: the active key's. Only `npm run bench` gives another, to price decision 24's signing against no signing. */
  responseSigner?: ResponseSigner;
}

const OVERLAY_RETENTION_MS = 10 * 60_000;
const CACHE_MAX_ENTRIES = 100_000;
const SWEEP_INTERVAL_MS = 30_000;
const LAG_SAMPLE_INTERVAL_MS = 5_000;
const STALENESS_SAMPLE_INTERVAL_MS = 1_000;

/**
 * The read API: projects the topics into the views and serves them. On the distributed runtime the
 * views are shared by every replica, so each replica reads them through a cache that its own change
 * feed corrects (see cached-view-store.ts); the embedded views are in this process already.
 */
export async function createReadApiModule({ config, runtime, clock, log, responseSigner }: ReadApiModuleDeps): Promise<RunningService> {
  const metrics = createServiceMetrics('read-api');
  const views = await runtime.openViewStore(READ_VIEWS);
  // The group's committed position belongs to the views it wrote: a new views database starts from offset zero.
  const groupId = `${DEFAULT_PROJECTION_GROUP_ID}.${config.READ_VIEWS_DB}`;
  const projections = await startProjections({
    eventLog: runtime.eventLog,
    views,
    log,
    groupId,
    onDeadLetter: (topic) => metrics.deadLettered.inc({ topic }),
    onProjectionError: () => metrics.projectionErrors.inc(),
  });

  const served = runtime.sharedViews
    ? await cachedWithChangeFeed(views, config, runtime, clock, log)
    : { views, staleness: NEVER_STALE, stop: () => Promise.resolve() };
  const lagSampler = every(
    LAG_SAMPLE_INTERVAL_MS,
    async () => {
      const lag = await runtime.consumerLag(groupId);
      if (lag !== undefined) metrics.consumerLag.set({ group: groupId }, lag);
    },
    { name: 'sampling the projection lag', log },
  );
  const stalenessSampler = every(
    STALENESS_SAMPLE_INTERVAL_MS,
    () => metrics.feedStaleness.set(served.staleness.staleForMs(clock.now()) / 1000),
    { name: 'sampling the feed staleness', log },
  );

  const feedInTouch: ReadinessCheck = {
    name: 'change-feed',
    check: () =>
      served.staleness.isStale(clock.now())
        ? Promise.reject(new Error('the change feed has been out of touch with the event log for longer than FEED_STALENESS_BOUND_MS'))
        : Promise.resolve(),
  };
  const accessRecorder = await startAccessRecording(config, runtime, metrics, log);
  const app = buildApp({
    config,
    // The runner has resolved it (SIGNING_KEYS_SECRET): configured, or made in the data directory.
    signingKeys: await signingKeysFrom(config.RESPONSE_SIGNING_KEYS ?? []),
    ...(responseSigner ? { responseSigner } : {}),
    views: served.views,
    staleness: served.staleness,
    rateLimitStores: await runtime.rateLimitStores((active) => metrics.rateLimitFallback.set(active ? 1 : 0)),
    clock,
    log,
    // Only a replica with a change feed can lose touch with the log; the embedded views cannot.
    operations: {
      metrics,
      readiness: [...runtime.readiness(), caughtUpCheck(projections.caughtUp), ...(runtime.sharedViews ? [feedInTouch] : [])],
    },
    recordAccess: accessRecorder?.record,
  });

  return {
    app,
    caughtUp: projections.caughtUp,
    stop: inOrder(
      () => lagSampler.stop(),
      () => stalenessSampler.stop(),
      // The server has stopped taking requests by now: every answer's record is in the recorder.
      async () => accessRecorder?.stop(ACCESS_LOG_STOP_DEADLINE_MS),
      () => served.stop(),
      () => projections.close(),
      () => views.close(),
    ),
  };
}

async function cachedWithChangeFeed(
  store: ViewStore,
  config: ReadApiConfig,
  runtime: Runtime,
  clock: Clock,
  log: Logger,
): Promise<{ views: ViewStore; staleness: FeedStaleness; stop(): Promise<void> }> {
  const cached = createCachedViewStore(store, READ_VIEWS, {
    ttlMs: config.VIEW_CACHE_TTL_MS,
    overlayRetentionMs: OVERLAY_RETENTION_MS,
    maxEntries: CACHE_MAX_ENTRIES,
  });
  const replicaId = config.REPLICA_ID ?? `${hostname()}-${config.READ_API_PORT}`;
  const startedAt = clock.now();
  const feed: Subscription = await startChangeFeed({ eventLog: runtime.eventLog, views: cached, log, replicaId });
  const sweeper = every(SWEEP_INTERVAL_MS, () => cached.sweep(), { name: 'sweeping the view cache', log });
  return {
    views: cached,
    staleness: feedStaleness(feed, startedAt, {
      boundMs: config.FEED_STALENESS_BOUND_MS,
      lagBoundMs: config.FEED_LAG_BOUND_MS,
      recoveryGraceMs: config.FEED_RECOVERY_GRACE_MS,
    }),
    stop: inOrder(
      () => sweeper.stop(),
      () => feed.close(),
    ),
  };
}
