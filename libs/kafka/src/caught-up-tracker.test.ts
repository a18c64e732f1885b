import { CaughtUpTracker } from './caught-up-tracker';
import type { PartitionOffsets } from './topic-admin';

const offsets = (partition: number, low: bigint, end: bigint): PartitionOffsets => ({ topic: 't', partition, low, end });

/** A tracker and how often it reported being caught up. */
function aTracker(snapshot: readonly PartitionOffsets[], fromBeginning = true) {
  const reports = { count: 0 };
  const tracker = new CaughtUpTracker(snapshot, fromBeginning, () => (reports.count += 1));
  return { tracker, reports };
}

describe('CaughtUpTracker', () => {
  it('when every assigned partition has been handled up to its end at the start, then it reports once, and not before', () => {
    const { tracker, reports } = aTracker([offsets(0, 0n, 2n), offsets(1, 0n, 1n)]);
    tracker.assign({ t: [0, 1] });
    tracker.startFrom(new Map());

    tracker.handled('t', 0, '0');
    tracker.handled('t', 0, '1');
    const beforeLast = reports.count;
    tracker.handled('t', 1, '0');
    tracker.handled('t', 1, '1');

    expect(beforeLast).toBe(0);
    expect(reports.count).toBe(1);
  });

  it('when the group has committed past the end on every assigned partition, then it reports without handling anything', () => {
    const { tracker, reports } = aTracker([offsets(0, 0n, 5n), offsets(1, 0n, 3n)]);
    tracker.assign({ t: [0, 1] });

    tracker.startFrom(
      new Map([
        ['t:0', 5n],
        ['t:1', 3n],
      ]),
    );

    expect(reports.count).toBe(1);
  });

  it('when the consumer is assigned only some partitions, then only those count', () => {
    const { tracker, reports } = aTracker([offsets(0, 0n, 1n), offsets(1, 0n, 4n)]);

    tracker.assign({ t: [0] });
    tracker.startFrom(new Map());
    tracker.handled('t', 0, '0');

    expect(reports.count).toBe(1);
  });

  it('when no partition is assigned yet, then it does not report; with an empty assignment it does', () => {
    const { tracker, reports } = aTracker([offsets(0, 0n, 1n)]);
    const unassigned = reports.count;

    tracker.assign({});

    expect(unassigned).toBe(0);
    expect(reports.count).toBe(1);
  });

  it('when partitions are empty or were added after the start, then they count as caught up', () => {
    const { tracker, reports } = aTracker([offsets(0, 3n, 3n)]);

    tracker.assign({ t: [0, 7] });

    expect(reports.count).toBe(1);
  });

  it('when a live-only group has no position, then it starts at the end and reports at once', () => {
    const { tracker, reports } = aTracker([offsets(0, 0n, 9n)], false);
    tracker.assign({ t: [0] });

    tracker.startFrom(new Map());

    expect(reports.count).toBe(1);
  });

  it('when a committed position lies before the oldest record, then reading starts from the oldest record', () => {
    const { tracker, reports } = aTracker([offsets(0, 4n, 6n)]);
    tracker.assign({ t: [0] });
    tracker.startFrom(new Map([['t:0', 1n]]));
    const beforeHandling = reports.count;

    tracker.handled('t', 0, '4');
    tracker.handled('t', 0, '5');

    expect(beforeHandling).toBe(0);
    expect(reports.count).toBe(1);
  });
});
