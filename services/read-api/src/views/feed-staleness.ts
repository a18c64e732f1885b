import type { Subscription } from '@rsd/ports';

/**
 * Decision 29: a replica whose change feed has lost the event log must stop answering from its
 * copy once the copy may be older than the bound, or a revocation recorded meanwhile would be
 * outlived. The feed's freshness is the last time it is known to have held everything the log held.
 */
export interface FeedStaleness {
  /** How long the replica's copy may have lagged the log at `now`. */
  staleForMs(now: Date): number;
  isStale(now: Date): boolean;
}

export interface StalenessBounds {
  /** Out of touch for longer than this: stale. */
  boundMs: number;
  /**
   * In touch but behind a reading of the log's ends for longer than this: stale too. A revocation
   * answered 200 is in the log, so a replica that reaches the log but has not caught up with it
   * (just after an outage, say) would otherwise serve the revoked key past the 1 s promise.
   */
  lagBoundMs: number;
  /**
   * Back in touch, a replica stays stale until it is fresh as of this long after its first new
   * reading of the log: a revocation recorded during the outage reaches the log only when the
   * credentials service's outbox relay gets to it, a moment after the log returns.
   */
  recoveryGraceMs: number;
}

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
