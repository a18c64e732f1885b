import type { Consumer, ConsumerConfig, EachMessagePayload, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventRecord, SubscribeOptions, Subscription } from '@rsd/ports';
import { CaughtUpTracker, hasUsablePosition } from './caught-up-tracker';
import { partitionKey, type CommittedOffsets, type PartitionOffsets, type TopicAdmin } from './topic-admin';

const RETRY_FIRST_DELAY_MS = 100;
const RETRY_MAX_DELAY_MS = 5_000;

export interface SubscriptionDeps {
  kafka: Kafka;
  topics: TopicAdmin;
  consumerConfig: Omit<ConsumerConfig, 'groupId'>;
  log: Logger;
  onClose(subscription: KafkaSubscription): void;
}

/**
 * One kafkajs consumer in the subscription's group. A record's position is committed only once
 * its handler resolved; a handler that throws gets the same record again after a growing pause,
 * so nothing is skipped and later records of that partition wait.
 */
export async function subscribeWithKafka(deps: SubscriptionDeps, options: SubscribeOptions): Promise<KafkaSubscription> {
  const { topics } = deps;
  if (options.topics.length === 0) throw new Error('a subscription needs at least one topic');
  await topics.assertTopicsExist(options.topics);
  const [snapshot, committed] = await Promise.all([
    topics.partitionOffsets(options.topics),
    topics.committedOffsets(options.groupId, options.topics),
  ]);
  const subscription = new KafkaSubscription(deps, options, snapshot, committed);
  await subscription.start();
  return subscription;
}

export class KafkaSubscription implements Subscription {
  private readonly consumer: Consumer;
  private readonly tracker: CaughtUpTracker;
  private readonly log: Logger;
  private closed = false;
  private closing: Promise<void> | undefined;
  private cancelPause: (() => void) | undefined;
  private joined = false;

  constructor(
    private readonly deps: SubscriptionDeps,
    private readonly options: SubscribeOptions,
    private readonly snapshot: readonly PartitionOffsets[],
    private readonly committedAtStart: CommittedOffsets,
  ) {
    this.log = deps.log.child({ groupId: options.groupId, topics: options.topics });
    this.tracker = new CaughtUpTracker(snapshot, options.fromBeginning);
    this.consumer = deps.kafka.consumer({ ...deps.consumerConfig, groupId: options.groupId });
    this.consumer.on(this.consumer.events.GROUP_JOIN, ({ payload }) => this.onJoin(payload.memberAssignment));
    this.consumer.on(this.consumer.events.CRASH, ({ payload }) =>
      this.log.error({ err: payload.error, restart: payload.restart }, 'event log consumer crashed'),
    );
  }

  get caughtUp(): Promise<void> {
    return this.tracker.caughtUp;
  }

  async start(): Promise<void> {
    try {
      await this.consumer.connect();
      await this.consumer.subscribe({ topics: [...this.options.topics], fromBeginning: this.options.fromBeginning });
      await this.consumer.run({ autoCommit: false, eachMessage: (payload) => this.onMessage(payload) });
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.cancelPause?.();
      this.tracker.stop();
      this.deps.onClose(this);
      // kafkajs waits for a running handler, which the closed flag ends at its next pause.
      this.closing = this.consumer.disconnect();
    }
    return this.closing ?? Promise.resolve();
  }

  private onJoin(assignment: Readonly<Record<string, readonly number[]>>): void {
    if (!this.joined) {
      this.joined = true;
      if (!this.options.fromBeginning) this.startAtSnapshotEnd(assignment);
    }
    this.tracker.assign(assignment);
    const assignedTopics = Object.keys(assignment);
    if (assignedTopics.length === 0) return;
    this.deps.topics.committedOffsets(this.options.groupId, assignedTopics).then(
      (committed) => this.tracker.startFrom(committed),
      (error: unknown) => {
        if (!this.closed) this.log.warn({ err: error }, 'could not read committed positions after joining the group');
      },
    );
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

  private async onMessage(payload: EachMessagePayload): Promise<void> {
    const { topic, partition, message } = payload;
    const record = toEventRecord(topic, partition, message);
    if (!(await this.handleUntilDone(record, () => payload.heartbeat()))) return;
    const next = (BigInt(message.offset) + 1n).toString();
    await this.consumer.commitOffsets([{ topic, partition, offset: next }]);
    this.tracker.handled(topic, partition, message.offset);
  }

  /**
   * Projectors dead-letter input they cannot use, so a throw means a passing fault: the record is
   * tried again after a growing pause. The heartbeat keeps the membership alive meanwhile, and a
   * rebalance it reports is thrown to kafkajs, which rejoins and redelivers from the committed
   * position. False once closed.
   */
  private async handleUntilDone(record: EventRecord, heartbeat: () => Promise<void>): Promise<boolean> {
    let delayMs = RETRY_FIRST_DELAY_MS;
    while (!this.closed) {
      try {
        await this.options.handle({ ...record });
        return true;
      } catch (error) {
        this.log.error(
          { err: error, topic: record.topic, partition: record.partition, offset: record.offset },
          'event handler failed; retrying the record',
        );
      }
      await this.pause(delayMs);
      if (this.closed) break;
      await heartbeat();
      delayMs = Math.min(delayMs * 2, RETRY_MAX_DELAY_MS);
    }
    return false;
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(end, ms);
      function end() {
        clearTimeout(timer);
        resolve();
      }
      this.cancelPause = end;
    });
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
