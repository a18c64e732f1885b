import { DAY_MS } from '@rsd/domain';
import type { Logger } from '@rsd/platform';
import type { AccessLogStore, Clock } from '@rsd/ports';

const PRUNE_INTERVAL_MS = 3_600_000;

/**
 * Decision 21's retention: at start and every hour, records older than `retentionDays` go (by date
 * on the embedded runtime; MongoDB's TTL index does it too, FerretDB's has none).
 */
export function startAccessLogPruner(deps: { store: AccessLogStore; retentionDays: number; clock: Clock; log: Logger }): {
  stop(): Promise<void>;
} {
  let running: Promise<void> = Promise.resolve();
  const prune = () => {
    const now = deps.clock.now();
    running = deps.store
      .prune(new Date(now.getTime() - deps.retentionDays * DAY_MS), now)
      .catch((error: unknown) => deps.log.warn({ err: error }, 'could not prune the access log; trying again in an hour'));
  };
  prune();
  const timer = setInterval(prune, PRUNE_INTERVAL_MS).unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
