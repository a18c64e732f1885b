import { partitionKey, type CommittedOffsets, type PartitionOffsets } from './topic-admin';

type Assignment = Readonly<Record<string, readonly number[]>>;

/**
 * Tells the consumer core when a subscription has handled every record that was in its topics when it started. In a
 * group a consumer reads only the partitions assigned to it, so only those count. A partition is
 * done once the group's position in it reaches the end noted at the start, whether this consumer
 * handled the records or the group had committed past them before.
 */
export class CaughtUpTracker {
  private readonly atStart = new Map<string, PartitionOffsets>();
  /** The next offset the group reads per partition, as far as this consumer knows; only grows. */
  private readonly positions = new Map<string, bigint>();
  /** Unknown until the first join. */
  private assigned: string[] | undefined;
  private reported = false;

  constructor(
    snapshot: readonly PartitionOffsets[],
    private readonly fromBeginning: boolean,
    /** Called once, when every assigned partition is done. */
    private readonly onCaughtUp: () => void,
  ) {
    for (const offsets of snapshot) this.atStart.set(partitionKey(offsets.topic, offsets.partition), offsets);
  }

  /** The partitions a group join gave this consumer; the others no longer count. */
  assign(assignment: Assignment): void {
    this.assigned = Object.entries(assignment).flatMap(([topic, partitions]) =>
      partitions.map((partition) => partitionKey(topic, partition)),
    );
    this.check();
  }

  /**
   * Where reading starts on each assigned partition: the group's committed position if it has a
   * usable one, else the oldest record or, for a live-only subscription, the end.
   */
  startFrom(committed: CommittedOffsets): void {
    for (const key of this.assigned ?? []) {
      const offsets = this.atStart.get(key);
      if (!offsets) continue;
      this.advance(key, startOf(offsets, committed.get(key), this.fromBeginning));
    }
    this.check();
  }

  /** The partitions this consumer reads, once it has joined. */
  get assignedPartitions(): readonly string[] | undefined {
    return this.assigned;
  }

  /** The next offset the group reads in a `topic:partition`, if known. */
  positionOf(key: string): bigint | undefined {
    return this.positions.get(key);
  }

  /** A record was handled (and, unless the subscription is ephemeral, its position committed). */
  handled(topic: string, partition: number, offset: string): void {
    this.advance(partitionKey(topic, partition), BigInt(offset) + 1n);
    this.check();
  }

  private advance(key: string, position: bigint): void {
    const known = this.positions.get(key);
    if (known === undefined || position > known) this.positions.set(key, position);
  }

  private isDone(key: string): boolean {
    const offsets = this.atStart.get(key);
    // A partition added after the start, or one that was empty, held nothing to catch up on.
    if (!offsets || offsets.end <= offsets.low) return true;
    const position = this.positions.get(key);
    return position !== undefined && position >= offsets.end;
  }

  private check(): void {
    if (this.reported || !this.assigned?.every((key) => this.isDone(key))) return;
    this.reported = true;
    this.onCaughtUp();
  }
}

/** A committed position before the oldest record cannot be read from; kafkajs then resets it. */
export function hasUsablePosition(offsets: PartitionOffsets, committed: bigint | undefined): committed is bigint {
  return committed !== undefined && committed >= offsets.low;
}

/** Where a consumer starts reading a partition, as kafkajs decides it. */
function startOf(offsets: PartitionOffsets, committed: bigint | undefined, fromBeginning: boolean): bigint {
  if (hasUsablePosition(offsets, committed)) return committed;
  return fromBeginning ? offsets.low : offsets.end;
}
