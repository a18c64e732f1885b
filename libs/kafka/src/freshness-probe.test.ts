import { FreshnessProbe } from './freshness-probe';
import type { PartitionOffsets } from './topic-admin';

const offsets = (partition: number, end: bigint, low = 0n): PartitionOffsets => ({ topic: 't', partition, low, end });
const at = (second: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, second));

/** A probe over positions the test moves by hand. */
function aProbe(assigned: readonly string[] = ['t:0', 't:1']) {
  const positions = new Map<string, bigint>();
  const probe = new FreshnessProbe(
    (key) => positions.get(key),
    () => assigned,
  );
  return { probe, positions };
}

describe('FreshnessProbe', () => {
  it('when the follower has reached the ends read at a time, then it is fresh as of that time, and not before', () => {
    const { probe, positions } = aProbe();
    positions.set('t:0', 3n);
    positions.set('t:1', 0n);

    probe.noted(at(1), [offsets(0, 4n), offsets(1, 0n)]);
    const before = probe.value;
    positions.set('t:0', 4n);
    probe.check();

    expect(before).toBeUndefined();
    expect(probe.value).toEqual(at(1));
  });

  it('when a later reading is reached, then the freshness moves to it and the older readings are dropped', () => {
    const { probe, positions } = aProbe(['t:0']);
    probe.noted(at(1), [offsets(0, 2n)]);
    probe.noted(at(2), [offsets(0, 5n)]);
    positions.set('t:0', 2n);
    probe.check();
    expect(probe.value).toEqual(at(1));

    positions.set('t:0', 5n);
    probe.check();
    expect(probe.value).toEqual(at(2));
  });

  it('when no reading arrives (the log is out of reach), then the freshness stays where it was however far the positions move', () => {
    const { probe, positions } = aProbe(['t:0']);
    positions.set('t:0', 1n);
    probe.noted(at(1), [offsets(0, 1n)]);

    positions.set('t:0', 10n);
    probe.check();

    expect(probe.value).toEqual(at(1));
  });

  it("when a partition is another member's or empty, then it owes nothing; an unknown position with records does", () => {
    const { probe, positions } = aProbe(['t:0', 't:1']);
    probe.noted(at(1), [offsets(0, 3n), offsets(1, 7n, 7n), offsets(2, 9n)]);
    expect(probe.value).toBeUndefined();

    positions.set('t:0', 3n);
    probe.check();

    expect(probe.value).toEqual(at(1));
  });

  it('when the follower has not joined its group yet, then it is not fresh', () => {
    const probe = new FreshnessProbe(
      () => 0n,
      () => undefined,
    );
    probe.noted(at(1), [offsets(0, 0n)]);

    expect(probe.value).toBeUndefined();
  });
});

describe('FreshnessProbe: how long behind', () => {
  it('when readings are not reached, then behindSince is the oldest of them; once reached, nothing', () => {
    const positions = new Map<string, bigint>([['t:0', 1n]]);
    const probe = new FreshnessProbe(
      (key) => positions.get(key),
      () => ['t:0'],
    );
    probe.noted(at(1), [offsets(0, 3n)]);
    probe.noted(at(2), [offsets(0, 4n)]);

    expect(probe.behindSince).toEqual(at(1));
    positions.set('t:0', 3n);
    probe.check();
    expect(probe.behindSince).toEqual(at(2));
    positions.set('t:0', 4n);
    probe.check();
    expect(probe.behindSince).toBeUndefined();
  });
});
