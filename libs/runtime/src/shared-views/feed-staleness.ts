import type { FeedStaleness, StalenessBounds, Subscription } from '@rsd/ports';

/** Views kept in this process from an in-process log are never behind it. */
export const NEVER_STALE: FeedStaleness = { staleForMs: () => 0, isStale: () => false };

/** Until the feed first catches up, it counts as fresh from `startedAt`: a replica starting during an outage goes stale too. */
export function feedStaleness(
  feed: Pick<Subscription, 'freshAsOf' | 'behindSince'>,
  startedAt: Date,
  bounds: StalenessBounds,
): FeedStaleness {
  const freshAsOf = (): Date => feed.freshAsOf() ?? startedAt;
  const staleForMs = (now: Date): number => Math.max(0, now.getTime() - freshAsOf().getTime());
  /** While stale: how fresh the feed was when it went stale, and its first newer freshness since. */
  let outage: { lastFresh: number; backInTouch?: number } | undefined;

  return {
    staleForMs,
    isStale(now) {
      const behindSince = feed.behindSince();
      if (behindSince !== undefined && now.getTime() - behindSince.getTime() > bounds.lagBoundMs) return true;
      const fresh = freshAsOf().getTime();
      if (!outage) {
        if (staleForMs(now) <= bounds.boundMs) return false;
        outage = { lastFresh: fresh };
      }
      if (fresh > outage.lastFresh) outage.backInTouch ??= fresh;
      if (outage.backInTouch !== undefined && fresh >= outage.backInTouch + bounds.recoveryGraceMs) {
        outage = undefined;
        return false;
      }
      return true;
    },
  };
}
