import { CaughtUpTracker } from './caught-up-tracker';
import type { PartitionOffsets } from './topic-admin';

const offsets = (partition: number, low: bigint, end: bigint): PartitionOffsets => ({ topic: 't', partition, low, end });

async function isSettled(promise: Promise<void>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('CaughtUpTracker', () => {
  it('when every assigned partition has been handled up to its end at the start, then it is caught up, and not before', async () => {
    const tracker = new CaughtUpTracker([offsets(0, 0n, 2n), offsets(1, 0n, 1n)], true);
    tracker.assign({ t: [0, 1] });
    tracker.startFrom(new Map());

    tracker.handled('t', 0, '0');
    tracker.handled('t', 0, '1');
    const beforeLast = await isSettled(tracker.caughtUp);
    tracker.handled('t', 1, '0');

    expect(beforeLast).toBe(false);
    expect(await isSettled(tracker.caughtUp)).toBe(true);
  });

  it('when the group has committed past the end on every assigned partition, then it is caught up without handling anything', async () => {
    const tracker = new CaughtUpTracker([offsets(0, 0n, 5n), offsets(1, 0n, 3n)], true);
    tracker.assign({ t: [0, 1] });

    tracker.startFrom(
      new Map([
        ['t:0', 5n],
        ['t:1', 3n],
      ]),
    );

    expect(await isSettled(tracker.caughtUp)).toBe(true);
  });

  it('when the consumer is assigned only some partitions, then only those count', async () => {
    const tracker = new CaughtUpTracker([offsets(0, 0n, 1n), offsets(1, 0n, 4n)], true);

    tracker.assign({ t: [0] });
    tracker.startFrom(new Map());
    tracker.handled('t', 0, '0');

    expect(await isSettled(tracker.caughtUp)).toBe(true);
  });

  it('when no partition is assigned yet, then it is not caught up; with an empty assignment it is', async () => {
    const tracker = new CaughtUpTracker([offsets(0, 0n, 1n)], true);
    const unassigned = await isSettled(tracker.caughtUp);

    tracker.assign({});

    expect(unassigned).toBe(false);
    expect(await isSettled(tracker.caughtUp)).toBe(true);
  });

  it('when partitions are empty or were added after the start, then they count as caught up', async () => {
    const tracker = new CaughtUpTracker([offsets(0, 3n, 3n)], true);

    tracker.assign({ t: [0, 7] });

    expect(await isSettled(tracker.caughtUp)).toBe(true);
  });

  it('when a live-only group has no position, then it starts at the end and is caught up at once', async () => {
    const tracker = new CaughtUpTracker([offsets(0, 0n, 9n)], false);
    tracker.assign({ t: [0] });

    tracker.startFrom(new Map());

    expect(await isSettled(tracker.caughtUp)).toBe(true);
  });

  it('when a committed position lies before the oldest record, then reading starts from the oldest record', async () => {
    const tracker = new CaughtUpTracker([offsets(0, 4n, 6n)], true);
    tracker.assign({ t: [0] });
    tracker.startFrom(new Map([['t:0', 1n]]));
    const beforeHandling = await isSettled(tracker.caughtUp);

    tracker.handled('t', 0, '4');
    tracker.handled('t', 0, '5');

    expect(beforeHandling).toBe(false);
    expect(await isSettled(tracker.caughtUp)).toBe(true);
  });

  it('when the subscription stops, then waiting for it ends', async () => {
    const tracker = new CaughtUpTracker([offsets(0, 0n, 9n)], true);
    tracker.assign({ t: [0] });

    tracker.stop();

    expect(await isSettled(tracker.caughtUp)).toBe(true);
  });
});
