import { hostname } from 'node:os';
import { READ_VIEWS } from '@rsd/domain';
import { createServiceMetrics, type ReadinessCheck } from '@rsd/observability';
import { ConfigError, type Logger, type ServiceModule } from '@rsd/platform';
import type { Clock, Subscription, ViewStore } from '@rsd/ports';
import type { Runtime, RuntimeKind } from '@rsd/runtime';
import { buildApp } from './app';
import type { ReadApiConfig } from './config';
import { DEFAULT_PROJECTION_GROUP_ID, startProjections } from './projections/projection-runner';
import { createCachedViewStore } from './views/cached-view-store';
import type { ResponseSigner } from './signing/response-signer';
import { loadOrCreateSigningKeys, signingKeysFrom, SIGNING_KEY_FILE, type SigningKeys } from './signing/signing-keys';
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

export interface ReadApiModule extends ServiceModule {
  /** Resolves once the projection has handled every event that was in the log when it started. */
  viewsCaughtUp: Promise<void>;
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
export async function createReadApiModule({ config, runtime, clock, log, responseSigner }: ReadApiModuleDeps): Promise<ReadApiModule> {
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
  let caughtUp = false;
  const viewsCaughtUp = projections.caughtUp.then(() => {
    caughtUp = true;
  });

  const served =
    runtime.kind === 'distributed'
      ? await cachedWithChangeFeed(views, config, runtime, clock, log)
      : { views, staleness: NEVER_STALE, stop: () => Promise.resolve() };
  const lagSampler = setInterval(() => {
    runtime.consumerLag(groupId).then(
      (lag) => lag !== undefined && metrics.consumerLag.set({ group: groupId }, lag),
      () => undefined,
    );
  }, LAG_SAMPLE_INTERVAL_MS).unref();
  const stalenessSampler = setInterval(
    () => metrics.feedStaleness.set(served.staleness.staleForMs(clock.now()) / 1000),
    STALENESS_SAMPLE_INTERVAL_MS,
  ).unref();

  const projectionCaughtUp: ReadinessCheck = {
    name: 'projection',
    check: () => (caughtUp ? Promise.resolve() : Promise.reject(new Error('the projection is still catching up'))),
  };
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
    signingKeys: await responseSigningKeys(config, runtime, log),
    ...(responseSigner ? { responseSigner } : {}),
    views: served.views,
    staleness: served.staleness,
    rateLimitStores: await runtime.rateLimitStores((active) => metrics.rateLimitFallback.set(active ? 1 : 0)),
    clock,
    log,
    // Only a replica with a change feed can lose touch with the log; the embedded views cannot.
    operations: {
      metrics,
      readiness: [...runtime.readiness(), projectionCaughtUp, ...(runtime.kind === 'distributed' ? [feedInTouch] : [])],
    },
    recordAccess: accessRecorder?.record,
  });

  return {
    name: 'read-api',
    app,
    viewsCaughtUp,
    stop: async () => {
      clearInterval(lagSampler);
      clearInterval(stalenessSampler);
      // The server has stopped taking requests by now: every answer's record is in the recorder.
      await accessRecorder?.stop(ACCESS_LOG_STOP_DEADLINE_MS);
      await served.stop();
      await projections.close();
      await views.close();
    },
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
  const sweeper = setInterval(() => cached.sweep(), SWEEP_INTERVAL_MS).unref();
  return {
    views: cached,
    staleness: feedStaleness(feed, startedAt, {
      boundMs: config.FEED_STALENESS_BOUND_MS,
      lagBoundMs: config.FEED_LAG_BOUND_MS,
      recoveryGraceMs: config.FEED_RECOVERY_GRACE_MS,
    }),
    stop: async () => {
      clearInterval(sweeper);
      await feed.close();
    },
  };
}

/** Decision 24: from the configuration (a secret), or, on the embedded runtime only, generated once into its data directory. */
async function responseSigningKeys(config: ReadApiConfig, runtime: Runtime, log: Logger): Promise<SigningKeys> {
  if (config.RESPONSE_SIGNING_KEYS) return signingKeysFrom(config.RESPONSE_SIGNING_KEYS);
  if (runtime.dataDir === undefined) throw signingKeysRequired();
  const { keys, created } = await loadOrCreateSigningKeys(runtime.dataDir);
  if (created) log.info({ file: SIGNING_KEY_FILE }, 'generated the response signing key in the data directory');
  return signingKeysFrom(keys);
}

/** A configuration error, which no retry mends: main checks it before anything starts. */
export function assertSigningKeysConfigured(config: Pick<ReadApiConfig, 'RESPONSE_SIGNING_KEYS'>, runtime: RuntimeKind): void {
  if (runtime === 'distributed' && !config.RESPONSE_SIGNING_KEYS) throw signingKeysRequired();
}

const signingKeysRequired = () =>
  new ConfigError(['RESPONSE_SIGNING_KEYS: is required on the distributed runtime: every replica must sign with the same published keys']);
