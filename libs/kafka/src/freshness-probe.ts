import { partitionKey, type PartitionOffsets } from './topic-admin';

/** A reading of the log's ends, taken at `at`. */
interface Probe {
  at: Date;
  ends: readonly PartitionOffsets[];
}

/** Probes are taken every second or so; a follower further behind than this many is stale by far anyway. */
const MAX_OPEN_PROBES = 300;

/**
 * How fresh a follower is: the time of the latest reading of the log's ends that its positions have
 * reached. A follower that cannot reach the log stops getting readings, so its freshness stops
 * advancing however long the outage lasts; one that reaches the log but lags behind it stays at
 * the reading it last caught up with.
 */
export class FreshnessProbe {
  private open: Probe[] = [];
  private freshAsOf: Date | undefined;

  constructor(
    /** The next offset the follower reads in a `topic:partition`, if known. */
    private readonly positionOf: (key: string) => bigint | undefined,
    /** The partitions the follower reads; undefined until it has joined its group. */
    private readonly assigned: () => readonly string[] | undefined,
  ) {}

  /** A reading of the ends, taken at `at` (before the request went out, so it never claims too much). */
  noted(at: Date, ends: readonly PartitionOffsets[]): void {
    this.open.push({ at, ends });
    if (this.open.length > MAX_OPEN_PROBES) this.open.shift();
    this.check();
  }

  /** The follower handled a record or learnt its positions. */
  check(): void {
    const assigned = this.assigned();
    if (assigned === undefined) return;
    for (let i = this.open.length - 1; i >= 0; i -= 1) {
      const probe = this.open[i]!;
      if (!this.reached(probe, new Set(assigned))) continue;
      this.freshAsOf = probe.at;
      this.open = this.open.slice(i + 1);
      return;
    }
  }

  get value(): Date | undefined {
    return this.freshAsOf;
  }

  /** When the oldest reading the follower has not reached yet was taken; undefined when it has reached them all. */
  get behindSince(): Date | undefined {
    return this.open[0]?.at;
  }

  private reached(probe: Probe, assigned: ReadonlySet<string>): boolean {
    return probe.ends.every((offsets) => {
      const key = partitionKey(offsets.topic, offsets.partition);
      // Another member's partition, or an empty one, holds nothing this follower owes.
      if (!assigned.has(key) || offsets.end <= offsets.low) return true;
      const position = this.positionOf(key);
      return position !== undefined && position >= offsets.end;
    });
  }
}
