import { setTimeout as delay } from 'node:timers/promises';
import type { Consumer, ConsumerConfig, EachBatchPayload, EachMessagePayload, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import { type EventRecord, type SubscribeOptions, type Subscription } from '@rsd/ports';
import { ConsumerCore } from '@rsd/consumers';
import { CaughtUpTracker, hasUsablePosition } from './caught-up-tracker';
import { FreshnessProbe } from './freshness-probe';
import {
  isPassingKafkaError,
  partitionKey,
  retryWhilePassing,
  type CommittedOffsets,
  type PartitionOffsets,
  type TopicAdmin,
} from './topic-admin';

export interface SubscriptionDeps {
  kafka: Kafka;
  topics: TopicAdmin;
  consumerConfig: Omit<ConsumerConfig, 'groupId'>;
  log: Logger;
  onClose(subscription: KafkaSubscription): void;
}

/**
 * One kafkajs consumer in the subscription's group, driving the consumer core: kafkajs delivers
 * each partition's records in order and waits while the core retries one, so nothing is skipped
 * and later records of that partition wait. An ephemeral subscription commits nothing and
 * deletes its group once its consumer has left.
 */
export async function subscribeWithKafka(deps: SubscriptionDeps, options: SubscribeOptions): Promise<KafkaSubscription> {
  const { topics } = deps;
  if (options.topics.length === 0) throw new Error('a subscription needs at least one topic');
  await topics.assertTopicsExist(options.topics);
  const [snapshot, committed] = await Promise.all([
    retryWhilePassing(() => topics.partitionOffsets(options.topics)),
    topics.committedOffsets(options.groupId, options.topics),
  ]);
  const subscription = new KafkaSubscription(deps, options, snapshot, committed);
  await subscription.start();
  return subscription;
}

/** How often a follower that tracks its freshness reads the log's ends. */
const FRESHNESS_PROBE_INTERVAL_MS = 250;
/**
 * Partitions handled at once by one consumer: a projection's writes are round trips to MongoDB, so
 * one partition at a time would leave the projection waiting on them (docs/decisions/0102-distributed-runtime.md).
 */
const PARTITIONS_IN_PARALLEL = 8;

/**
 * The pause before the n-th restart of a consumer kafkajs gave up on: doubling from 500 ms up to
 * `capMs`, jittered down to half. A follower that tracks its freshness caps it at a second, as it
 * does kafkajs' own retries (kafka-event-log.ts): every second it is away, a revocation may go unenforced.
 */
export function restartDelayMs(restart: number, capMs = 5_000, random: () => number = Math.random): number {
  const capped = Math.min(capMs, 500 * 2 ** Math.max(0, restart - 1));
  return Math.round(capped / 2 + random() * (capped / 2));
}

export class KafkaSubscription implements Subscription {
  private readonly core: ConsumerCore;
  private readonly consumer: Consumer;
  private readonly tracker: CaughtUpTracker;
  private readonly freshness: FreshnessProbe;
  private readonly log: Logger;
  private joined = false;
  /** Counts group joins, so a reading of committed positions meant for an earlier join is dropped. */
  private joins = 0;
  private prober: NodeJS.Timeout | undefined;
  private probing = false;
  /** Restarts of the consumer after crashes kafkajs does not restart from; reset by a join. */
  private restarts = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private restarting: Promise<void> | undefined;
  /** Handled positions not committed yet, by partition (the offset to resume from). */
  private readonly owed = new Map<string, { topic: string; partition: number; offset: string }>();
  private committing: Promise<void> | undefined;

  constructor(
    private readonly deps: SubscriptionDeps,
    private readonly options: SubscribeOptions,
    private readonly snapshot: readonly PartitionOffsets[],
    private readonly committedAtStart: CommittedOffsets,
  ) {
    this.log = deps.log.child({ groupId: options.groupId, topics: options.topics });
    this.core = new ConsumerCore({
      groupId: options.groupId,
      handle: (record) => options.handle(record),
      ...(options.handleBatch ? { handleBatch: (records: readonly EventRecord[]) => options.handleBatch!(records) } : {}),
      commit: (record) => this.commit(record),
      stop: () => this.stop(),
      log: deps.log,
    });
    this.tracker = new CaughtUpTracker(snapshot, options.fromBeginning, () => this.core.reportCaughtUp());
    this.freshness = new FreshnessProbe(
      (key) => this.tracker.positionOf(key),
      () => this.tracker.assignedPartitions,
    );
    this.consumer = deps.kafka.consumer({ ...deps.consumerConfig, groupId: options.groupId });
    this.consumer.on(this.consumer.events.GROUP_JOIN, ({ payload }) => this.onJoin(payload.memberAssignment));
    this.consumer.on(this.consumer.events.CRASH, ({ payload }) => this.onCrash(payload.error, payload.restart));
  }

  get caughtUp(): Promise<void> {
    return this.core.caughtUp;
  }

  freshAsOf(): Date | undefined {
    return this.freshness.value;
  }

  behindSince(): Date | undefined {
    return this.freshness.behindSince;
  }

  /** A topic created a moment ago may not be hosted yet: subscribing is tried again while that passes. */
  async start(): Promise<void> {
    try {
      await retryWhilePassing(async () => {
        try {
          await this.run();
        } catch (error) {
          await this.consumer.disconnect().catch(() => undefined);
          throw error;
        }
      });
      if (this.options.trackFreshness) this.prober = setInterval(() => void this.probe(), FRESHNESS_PROBE_INTERVAL_MS).unref();
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  private async run(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [...this.options.topics], fromBeginning: this.options.fromBeginning });
    await this.consumer.run({
      autoCommit: false,
      // Order holds per partition (and so per key); partitions are independent, so they are handled side by side.
      partitionsConsumedConcurrently: PARTITIONS_IN_PARALLEL,
      // A consumer that takes batches gets each fetch of a partition at once (a projection then writes
      // each document once per batch); it must still read as one record at a time would.
      ...(this.options.handleBatch
        ? { eachBatch: (payload) => this.onBatch(payload) }
        : { eachMessage: (payload) => this.onMessage(payload) }),
    });
  }

  /**
   * kafkajs restarts a consumer after a retriable crash, but after any other it leaves it
   * disconnected for good: "no group coordinator found" on a cluster that is starting or failing
   * over is one such. A subscription must not go silently dead, so it restarts the consumer
   * itself, with a growing pause, until it joins again or the subscription closes.
   */
  private onCrash(error: unknown, kafkajsRestarts: boolean): void {
    if (this.core.closed) return;
    if (kafkajsRestarts) {
      this.log.warn({ err: error }, 'event log consumer crashed; kafkajs restarts it');
      return;
    }
    this.scheduleRestart(error);
  }

  private scheduleRestart(error: unknown): void {
    this.restarts += 1;
    const restartInMs = restartDelayMs(this.restarts, this.options.trackFreshness ? 1_000 : 5_000);
    const details = { err: error, restartInMs, restarts: this.restarts };
    const message = 'event log consumer stopped on an error kafkajs does not retry; restarting it';
    if (isPassingKafkaError(error)) this.log.warn(details, message);
    else this.log.error(details, message);
    this.restartTimer = setTimeout(() => {
      this.restarting = this.restart().finally(() => (this.restarting = undefined));
    }, restartInMs);
  }

  private async restart(): Promise<void> {
    if (this.core.closed) return;
    try {
      await this.run();
    } catch (error) {
      if (this.core.closed) return;
      await this.consumer.disconnect().catch(() => undefined);
      this.scheduleRestart(error);
    }
  }

  close(): Promise<void> {
    return this.core.close();
  }

  /** The log forgets the subscription only once it stopped, so closing the log waits for it. */
  private async stop(): Promise<void> {
    clearInterval(this.prober);
    clearTimeout(this.restartTimer);
    await this.restarting;
    try {
      // The positions handled so far, while the group still holds the partitions.
      await this.committing;
      if (this.owed.size > 0) await this.commitOwed();
      // kafkajs waits for a running handler, which the core ends at its next pause.
      await this.consumer.disconnect();
      if (this.options.ephemeral) await this.deleteGroup();
    } finally {
      this.deps.onClose(this);
    }
  }

  /** Closing must not fail over a leftover group: it is logged and holds no position anyway. */
  private async deleteGroup(): Promise<void> {
    try {
      await this.deps.topics.deleteGroup(this.options.groupId);
    } catch (error) {
      this.log.warn({ err: error }, 'could not delete the ephemeral consumer group');
    }
  }

  private onJoin(assignment: Readonly<Record<string, readonly number[]>>): void {
    this.restarts = 0;
    this.joins += 1;
    if (!this.joined) {
      this.joined = true;
      if (!this.options.fromBeginning) this.startAtSnapshotEnd(assignment);
    } else if (this.options.ephemeral) {
      this.resumeAtHandledPositions(assignment);
    }
    this.forgetUnassigned(assignment);
    this.tracker.assign(assignment);
    this.freshness.check();
    const assignedTopics = Object.keys(assignment);
    if (assignedTopics.length === 0) return;
    if (this.options.ephemeral) {
      // Nothing is ever committed in an ephemeral group: where it starts is known without asking.
      this.tracker.startFrom(new Map());
      this.freshness.check();
      return;
    }
    void this.startFromCommitted(this.joins, assignedTopics);
  }

  /**
   * Until the committed positions are known the subscription cannot tell that it has caught up,
   * so a coordinator that is slow to answer after a join is asked again until it does.
   */
  private async startFromCommitted(join: number, topics: readonly string[]): Promise<void> {
    for (let attempt = 1; !this.core.closed && join === this.joins; attempt += 1) {
      try {
        this.tracker.startFrom(await this.deps.topics.committedOffsets(this.options.groupId, topics));
        return;
      } catch (error) {
        if (this.core.closed || join !== this.joins) return;
        this.log.warn({ err: error }, 'could not read committed positions after joining the group; asking again');
      }
      await delay(restartDelayMs(attempt, this.options.trackFreshness ? 1_000 : 5_000));
    }
  }

  /**
   * A live-only group with no position would start wherever the end is at its first fetch, losing
   * records appended since subscribe was called; pinning the end seen then closes that gap.
   */
  private startAtSnapshotEnd(assignment: Readonly<Record<string, readonly number[]>>): void {
    for (const offsets of this.snapshot) {
      const { topic, partition } = offsets;
      if (!assignment[topic]?.includes(partition)) continue;
      if (hasUsablePosition(offsets, this.committedAtStart.get(partitionKey(topic, partition)))) continue;
      this.consumer.seek({ topic, partition, offset: offsets.end.toString() });
    }
  }

  /**
   * kafkajs restarts a crashed consumer (a broker outage, say) as a new group member that starts
   * from the committed position; an ephemeral group has none and would start at the end, silently
   * skipping whatever was appended meanwhile: a revocation, for instance. It resumes where it was.
   */
  private resumeAtHandledPositions(assignment: Readonly<Record<string, readonly number[]>>): void {
    for (const [topic, partitions] of Object.entries(assignment)) {
      for (const partition of partitions) {
        const position = this.tracker.positionOf(partitionKey(topic, partition));
        if (position !== undefined) this.consumer.seek({ topic, partition, offset: position.toString() });
      }
    }
  }

  /** One reading of the log's ends at a time; a failed one (the log out of reach) leaves the freshness where it was. */
  private async probe(): Promise<void> {
    if (this.probing || this.core.closed) return;
    this.probing = true;
    try {
      const at = new Date();
      this.freshness.noted(at, await this.deps.topics.partitionOffsets(this.options.topics));
    } catch (error) {
      this.log.debug({ err: error }, 'could not read the log ends for the freshness probe');
    } finally {
      this.probing = false;
    }
  }

  /**
   * The heartbeat keeps the membership alive while a record is retried; a rebalance it reports is
   * thrown to kafkajs, which rejoins and redelivers from the committed position.
   */
  private async onMessage(payload: EachMessagePayload): Promise<void> {
    const { topic, partition, message } = payload;
    const record = toEventRecord(topic, partition, message);
    if (await this.core.deliver(record, () => payload.heartbeat())) {
      this.tracker.handled(topic, partition, message.offset);
      this.freshness.check();
    }
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    if (batch.isEmpty() || payload.isStale()) return;
    const records = batch.messages.map((message) => toEventRecord(batch.topic, batch.partition, message));
    if (await this.core.deliverBatch(records, () => payload.heartbeat())) {
      this.tracker.handled(batch.topic, batch.partition, batch.lastOffset());
      this.freshness.check();
    }
  }

  /**
   * Group commit: one commit request in flight at a time, carrying the latest handled position of
   * every partition; what is handled meanwhile goes with the next. A commit per record would cost a
   * broker round trip each and hold the projection back (docs/decisions/0102-distributed-runtime.md).
   * A crash loses at most the positions in flight: their records are handled again, which every
   * handler absorbs.
   */
  private commit({ topic, partition, offset }: EventRecord): Promise<void> {
    if (this.options.ephemeral) return Promise.resolve();
    this.owed.set(partitionKey(topic, partition), { topic, partition, offset: (BigInt(offset) + 1n).toString() });
    this.committing ??= this.commitOwed().finally(() => (this.committing = undefined));
    return Promise.resolve();
  }

  /**
   * Until nothing is owed. A failed commit keeps its positions (unless newer ones came, or the group
   * was rebalanced meanwhile) for the next one, or for close.
   */
  private async commitOwed(): Promise<void> {
    while (this.owed.size > 0) {
      const offsets = [...this.owed.values()];
      const join = this.joins;
      this.owed.clear();
      try {
        await this.consumer.commitOffsets(offsets);
      } catch (error) {
        // After a rebalance the partitions may be another member's, whose positions these must not overwrite.
        for (const owed of join === this.joins ? offsets : []) {
          const key = partitionKey(owed.topic, owed.partition);
          if (!this.owed.has(key)) this.owed.set(key, owed);
        }
        this.log.warn({ err: error }, 'could not commit handled positions; they go with the next commit');
        return;
      }
    }
  }

  /** A partition given to another member is its to commit now: what this one owed for it is dropped. */
  private forgetUnassigned(assignment: Readonly<Record<string, readonly number[]>>): void {
    for (const [key, { topic, partition }] of this.owed) {
      if (!assignment[topic]?.includes(partition)) this.owed.delete(key);
    }
  }
}

function toEventRecord(topic: string, partition: number, message: KafkaMessage): EventRecord {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key?.toString('utf8') ?? null,
    value: message.value?.toString('utf8') ?? '',
  };
}
