import { DAY_MS } from '@rsd/domain';
import { every, type Logger, type PeriodicJob } from '@rsd/platform';
import type { AccessLogStore, Clock } from '@rsd/ports';

const PRUNE_INTERVAL_MS = 3_600_000;

/**
 * Decision 21's retention: at start and every hour, records older than `retentionDays` go (by date
 * on the embedded runtime; MongoDB's TTL index does it too, FerretDB's has none).
 */
export function startAccessLogPruner(deps: { store: AccessLogStore; retentionDays: number; clock: Clock; log: Logger }): PeriodicJob {
  return every(
    PRUNE_INTERVAL_MS,
    () => {
      const now = deps.clock.now();
      return deps.store.prune(new Date(now.getTime() - deps.retentionDays * DAY_MS), now);
    },
    { name: 'pruning the access log', log: deps.log, runAtStart: true },
  );
}
