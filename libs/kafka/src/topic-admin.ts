import { setTimeout as delay } from 'node:timers/promises';
import { KafkaJSDeleteGroupsError, KafkaJSError, type Admin } from 'kafkajs';
import type { Logger } from 'pino';

export interface TopicSettings {
  partitions: number;
  /** Unset: by the cluster's size (replicationOf). */
  replicationFactor?: number | undefined;
}

/** How a topic is replicated when this process creates it. */
export interface Replication {
  replicationFactor: number;
  /** `min.insync.replicas` when the topic sets it: 2 of 3 replicas acknowledge each write. */
  configEntries: { name: string; value: string }[];
}

/**
 * The replication a new topic gets: the configured factor, else 3 on a cluster of three brokers or
 * more and 1 below. With three replicas or more, `min.insync.replicas=2`: a write the producers'
 * `acks=all` sees acknowledged is on two brokers, and one broker can be lost without losing a write
 * or refusing one. The cluster's size is the larger of the brokers that answer and the bootstrap
 * list, so a broker that is down while a topic is created does not lower its replication.
 */
export async function replicationOf(admin: Admin, settings: TopicSettings, bootstrapBrokers: number): Promise<Replication> {
  let replicationFactor = settings.replicationFactor;
  if (replicationFactor === undefined) {
    const { brokers } = await admin.describeCluster();
    replicationFactor = Math.max(brokers.length, bootstrapBrokers) >= 3 ? 3 : 1;
  }
  return { replicationFactor, configEntries: replicationFactor >= 3 ? [{ name: 'min.insync.replicas', value: '2' }] : [] };
}

/** Thrown for a topic the broker does not have: topics are created at start-up, never on first use. */
export class UnknownTopicError extends Error {
  constructor(readonly topic: string) {
    super(
      `Kafka topic "${topic}" does not exist: the event log creates its topics at start-up ` +
        '(topics.names or ensureTopics) and the broker does not create topics on first use',
    );
    this.name = 'UnknownTopicError';
  }
}

export interface PartitionOffsets {
  topic: string;
  partition: number;
  /** The first offset still in the log. */
  low: bigint;
  /** The offset the next record will get. */
  end: bigint;
}

/** The group's committed position per `topic:partition`; absent when it has none. */
export type CommittedOffsets = Map<string, bigint>;

export const partitionKey = (topic: string, partition: number): string => `${topic}:${partition}`;

/** The topics are the event store, so nothing in them may ever expire. */
const KEEP_FOREVER = [
  { name: 'retention.ms', value: '-1' },
  { name: 'retention.bytes', value: '-1' },
];

/** How long topic creation may take, leaders included. */
const CREATE_TOPICS_TIMEOUT_MS = 10_000;

/**
 * How long a cluster that is starting or failing over may take to settle: a fresh broker creates
 * and loads `__consumer_offsets` first, and a topic just created is not hosted by its leader at once.
 */
const PATIENCE_MS = 15_000;
const FIRST_RETRY_DELAY_MS = 100;
const MAX_RETRY_DELAY_MS = 2_000;

/**
 * A state the cluster leaves by itself: a retriable broker answer (a coordinator loading or moving,
 * a leader election, a topic not hosted yet), a connection that failed, or kafkajs giving up on one
 * of those. kafkajs marks "no coordinator found" and "retries exhausted" as not retriable although,
 * on a cluster that is starting or failing over, waiting is exactly what mends them.
 */
export function isPassingKafkaError(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    if (cause instanceof KafkaJSError && cause.retriable) return true;
    if (cause.name === 'KafkaJSGroupCoordinatorNotFound' || cause.name === 'KafkaJSNumberOfRetriesExceeded') return true;
  }
  return false;
}

/**
 * Runs `read` again after a passing error, with a doubling pause, for up to 15 s. kafkajs's admin
 * reads a group's offsets without retrying, and refreshes a new subscription's metadata once, so a
 * coordinator still loading (or just moved, or not there yet) and a topic just created fail them.
 */
export async function retryWhilePassing<T>(read: () => Promise<T>): Promise<T> {
  const giveUpAt = Date.now() + PATIENCE_MS;
  for (let delayMs = FIRST_RETRY_DELAY_MS; ; delayMs = Math.min(delayMs * 2, MAX_RETRY_DELAY_MS)) {
    try {
      return await read();
    } catch (error) {
      if (Date.now() + delayMs > giveUpAt || !isPassingKafkaError(error)) throw error;
    }
    await delay(delayMs);
  }
}

const GROUP_DELETE_ATTEMPTS = 5;
const GROUP_DELETE_RETRY_DELAY_MS = 100;

/** The broker's reason for refusing to delete `groupId`, such as NON_EMPTY_GROUP. */
function deleteRefusal(error: unknown, groupId: string): string | undefined {
  if (!(error instanceof KafkaJSDeleteGroupsError)) return undefined;
  return error.groups.find((group) => group.groupId === groupId)?.error?.type;
}

export interface TopicAdmin {
  /** Creates the topics that are missing, with the configured layout; existing topics are left alone. */
  ensureTopics(names: readonly string[]): Promise<void>;
  /** Rejects with UnknownTopicError for the first topic the broker does not have. */
  assertTopicsExist(names: readonly string[]): Promise<void>;
  partitionOffsets(topics: readonly string[]): Promise<PartitionOffsets[]>;
  committedOffsets(groupId: string, topics: readonly string[]): Promise<CommittedOffsets>;
  /** Records in `topics` (default: those the group has positions in) that the group has not committed yet. */
  lag(groupId: string, topics?: readonly string[]): Promise<number>;
  /** Deletes a group whose members have left; a group that is already gone counts as deleted. */
  deleteGroup(groupId: string): Promise<void>;
  ping(): Promise<void>;
}

export function createTopicAdmin(admin: Admin, settings: TopicSettings, log: Logger, bootstrapBrokers = 1): TopicAdmin {
  /** Topics seen to exist; topics are never deleted by the service, so a hit needs no round trip. */
  const known = new Set<string>();

  async function missingOf(names: readonly string[]): Promise<string[]> {
    if (names.every((name) => known.has(name))) return [];
    const existing = await admin.listTopics();
    for (const name of existing) known.add(name);
    return [...new Set(names)].filter((name) => !known.has(name));
  }

  async function committedOffsets(groupId: string, topics: readonly string[]): Promise<CommittedOffsets> {
    const committed: CommittedOffsets = new Map();
    const answer = await retryWhilePassing(() => admin.fetchOffsets({ groupId, topics: [...topics] }));
    for (const { topic, partitions } of answer) {
      for (const { partition, offset } of partitions) {
        // kafkajs answers -1 for a partition the group has no position in.
        if (BigInt(offset) >= 0n) committed.set(partitionKey(topic, partition), BigInt(offset));
      }
    }
    return committed;
  }

  async function partitionOffsets(topics: readonly string[]): Promise<PartitionOffsets[]> {
    const perTopic = await Promise.all(
      topics.map(async (topic) =>
        (await admin.fetchTopicOffsets(topic)).map(({ partition, low, high }) => ({
          topic,
          partition,
          low: BigInt(low),
          end: BigInt(high),
        })),
      ),
    );
    return perTopic.flat();
  }

  async function topicsWithPositions(groupId: string): Promise<string[]> {
    const answer = await retryWhilePassing(() => admin.fetchOffsets({ groupId }));
    return answer.filter(({ partitions }) => partitions.some(({ offset }) => BigInt(offset) >= 0n)).map(({ topic }) => topic);
  }

  async function assertTopicsExist(names: readonly string[]): Promise<void> {
    const [missing] = await missingOf(names);
    if (missing !== undefined) throw new UnknownTopicError(missing);
  }

  return {
    // kafkajs waits for the new topics' leaders but gives up at once when the broker answers that it
    // does not host them yet (a fresh cluster): asked again, the topics are there.
    ensureTopics: (names) =>
      retryWhilePassing(async () => {
        const missing = await missingOf(names);
        if (missing.length === 0) return;
        const { replicationFactor, configEntries } = await replicationOf(admin, settings, bootstrapBrokers);
        // False means another process created them first, which is just as good.
        await admin.createTopics({
          waitForLeaders: true,
          timeout: CREATE_TOPICS_TIMEOUT_MS,
          topics: missing.map((topic) => ({
            topic,
            numPartitions: settings.partitions,
            replicationFactor,
            configEntries: [...KEEP_FOREVER, ...configEntries],
          })),
        });
        for (const name of missing) known.add(name);
        log.info({ topics: missing, partitions: settings.partitions, replicationFactor, configEntries }, 'created event log topics');
      }),

    assertTopicsExist,
    partitionOffsets,
    committedOffsets,

    async lag(groupId, topics) {
      const scope = topics ?? (await topicsWithPositions(groupId));
      if (scope.length === 0) return 0;
      await assertTopicsExist(scope);
      const [ends, committed] = await Promise.all([partitionOffsets(scope), committedOffsets(groupId, scope)]);
      let lag = 0n;
      for (const { topic, partition, low, end } of ends) {
        // No position, or one before the oldest record, reads from the oldest record.
        const committedAt = committed.get(partitionKey(topic, partition)) ?? low;
        const position = committedAt > low ? committedAt : low;
        if (end > position) lag += end - position;
      }
      return Number(lag);
    },

    async deleteGroup(groupId) {
      for (let attempt = 1; ; attempt += 1) {
        try {
          await admin.deleteGroups([groupId]);
          return;
        } catch (error) {
          const refusal = deleteRefusal(error, groupId);
          if (refusal === 'GROUP_ID_NOT_FOUND') return;
          // The coordinator may not have processed the last member's leave yet.
          if (refusal !== 'NON_EMPTY_GROUP' || attempt >= GROUP_DELETE_ATTEMPTS) throw error;
        }
        await delay(GROUP_DELETE_RETRY_DELAY_MS * attempt);
      }
    },

    async ping() {
      await admin.describeCluster();
    },
  };
}
