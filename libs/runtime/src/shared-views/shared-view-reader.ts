import type { ViewDefinition } from '@rsd/domain';
import { every, stopInOrder, type Logger } from '@rsd/platform';
import type { EventLog, ReadinessCheck, ViewReader, ViewReaderOptions, ViewStore } from '@rsd/ports';
import { createCachedViewStore } from './cached-view-store';
import { feedStaleness } from './feed-staleness';
import { startChangeFeed } from './view-change-feed';

const OVERLAY_RETENTION_MS = 10 * 60_000;
const CACHE_MAX_ENTRIES = 100_000;
const SWEEP_INTERVAL_MS = 30_000;

/**
 * Views that other processes write too, as one of their readers serves them: a cache in front of the
 * store that the reader's own change feed corrects (see cached-view-store.ts), stale once the feed has
 * been out of touch with the log for longer than the bounds allow.
 */
export async function sharedViewReader(
  store: ViewStore,
  views: readonly ViewDefinition<unknown>[],
  options: ViewReaderOptions & { eventLog: EventLog; log: Logger },
): Promise<ViewReader> {
  const { clock, log } = options;
  const cached = createCachedViewStore(store, views, {
    ttlMs: options.cacheTtlMs,
    overlayRetentionMs: OVERLAY_RETENTION_MS,
    maxEntries: CACHE_MAX_ENTRIES,
  });
  const startedAt = clock.now();
  const feed = await startChangeFeed({ eventLog: options.eventLog, views: cached, log, replicaId: options.readerId });
  const sweeper = every(SWEEP_INTERVAL_MS, () => cached.sweep(), { name: 'sweeping the view cache', log });
  const staleness = feedStaleness(feed, startedAt, options.staleness);
  const inTouch: ReadinessCheck = {
    name: 'change-feed',
    check: () =>
      staleness.isStale(clock.now())
        ? Promise.reject(new Error('the change feed has been out of touch with the event log for longer than FEED_STALENESS_BOUND_MS'))
        : Promise.resolve(),
  };
  return {
    views: cached,
    staleness,
    readiness: [inTouch],
    stop: stopInOrder(sweeper, feed),
  };
}
