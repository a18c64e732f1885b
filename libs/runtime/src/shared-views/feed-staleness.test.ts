import { feedStaleness, NEVER_STALE } from './feed-staleness';

const at = (second: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, second));

/** A feed whose freshness the test sets by hand. */
function aFeed(fresh: Date | undefined) {
  const feed = { fresh, behind: undefined as Date | undefined, freshAsOf: () => feed.fresh, behindSince: () => feed.behind };
  return feed;
}

describe('feed staleness (decision 29)', () => {
  it('when the feed was last fresh longer ago than the bound, then it is stale; at the bound it is not', () => {
    const staleness = feedStaleness(aFeed(at(10)), at(0), { boundMs: 30_000, lagBoundMs: 60_000, recoveryGraceMs: 0 });

    expect(staleness.staleForMs(at(40))).toBe(30_000);
    expect(staleness.isStale(at(40))).toBe(false);
    expect(staleness.isStale(at(41))).toBe(true);
  });

  it('when the feed has never caught up, then it counts from the start, so a replica started during an outage goes stale too', () => {
    const staleness = feedStaleness(aFeed(undefined), at(0), { boundMs: 5_000, lagBoundMs: 60_000, recoveryGraceMs: 0 });

    expect(staleness.isStale(at(5))).toBe(false);
    expect(staleness.isStale(at(6))).toBe(true);
  });

  // Timelines of a feed that was fresh at 0: at each step it may first be fresh as of that second, then is asked whether it is stale.
  it.each([
    {
      name: 'when a stale feed is back in touch, then it stays stale until it is fresh as of the grace after its first new reading',
      recoveryGraceMs: 3_000,
      steps: [
        { at: 6, stale: true },
        { at: 20, fresh: true, stale: true },
        { at: 22, fresh: true, stale: true },
        { at: 23, fresh: true, stale: false },
        { at: 24, stale: false },
      ],
    },
    {
      name: 'when the feed goes stale again after recovering, then the bound applies afresh',
      recoveryGraceMs: 0,
      steps: [
        { at: 6, stale: true },
        { at: 10, fresh: true, stale: false },
        { at: 15, stale: false },
        { at: 16, stale: true },
      ],
    },
  ])('$name', ({ recoveryGraceMs, steps }) => {
    const feed = aFeed(at(0));
    const staleness = feedStaleness(feed, at(0), { boundMs: 5_000, lagBoundMs: 60_000, recoveryGraceMs });

    for (const step of steps) {
      if (step.fresh) feed.fresh = at(step.at);
      expect(staleness.isStale(at(step.at))).toBe(step.stale);
    }
  });

  it('when the feed reaches the log but lags behind a reading of its ends for longer than the lag bound, then it is stale until it catches up', () => {
    const feed = aFeed(at(10));
    const staleness = feedStaleness(feed, at(0), { boundMs: 30_000, lagBoundMs: 750, recoveryGraceMs: 0 });
    feed.behind = new Date(at(10).getTime() + 250);

    expect(staleness.isStale(new Date(at(11).getTime()))).toBe(false);
    expect(staleness.isStale(new Date(at(11).getTime() + 1))).toBe(true);

    feed.behind = undefined;
    feed.fresh = at(11);
    expect(staleness.isStale(at(12))).toBe(false);
  });

  it('when the views are in this process, then they are never stale', () => {
    expect(NEVER_STALE.isStale(at(59))).toBe(false);
  });
});
