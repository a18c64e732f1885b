import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ConfigResourceTypes,
  ConfigSource,
  type Admin,
  type IHeaders,
  type Kafka,
  type KafkaMessage,
  type Message,
  type Producer,
} from 'kafkajs';
import { inParts } from './record-appender';
import { retryWhilePassing } from './topic-admin';

/** A topic as it was created: recreated the same (partitions, replication, its own settings such as `retention.ms=-1`). */
export interface TopicLayout {
  partitions: number;
  replicationFactor: number;
  configEntries: { name: string; value: string }[];
}

/** A consumer group's committed positions in the topic, as they were before it was deleted. */
export interface GroupPositions {
  groupId: string;
  offsets: { partition: number; offset: string }[];
}

/**
 * How far a rewrite of one topic went, kept apart from Kafka (a topic's deletion takes the groups'
 * positions in it with it): `copied` once the staging topic holds every record rewritten and was
 * checked, the groups' positions and the topic's layout recorded; `restored` once the topic holds the
 * staging copy again and the positions are translated. No record: nothing was done that a new run
 * must keep.
 */
export interface TopicRewriteState {
  topic: string;
  staging: string;
  step: 'copied' | 'restored';
  layout: TopicLayout;
  groups: GroupPositions[];
  /** Records per partition, and what the rewrite did with them (counted while copying). */
  records: number[];
  outcomes: Record<string, number>;
}

export interface TopicRewriteJournal {
  read(topic: string): Promise<TopicRewriteState | undefined>;
  write(state: TopicRewriteState): Promise<void>;
  remove(topic: string): Promise<void>;
}

/** What to do with a record's value: its new value (the same when it is kept) and what was done, by name. */
export type ValueRewrite = (value: string) => Promise<{ outcome: string; value: string }>;

export interface TopicRewriteOptions {
  kafka: Kafka;
  /** Connected. */
  admin: Admin;
  journal: TopicRewriteJournal;
  rewrite: ValueRewrite;
  /** The same answer as `rewrite` without its cost (no key made, nothing encrypted): whether the topic needs rewriting at all. */
  probe: ValueRewrite;
  progress?: (line: string) => void;
  /** Tests: stop as a crash would right after this step. */
  crashAfter?: 'copied' | 'deleted';
}

export interface TopicRewriteReport {
  topic: string;
  /** False when no record needed rewriting: the topic was left alone. */
  rewritten: boolean;
  records: number;
  outcomes: Record<string, number>;
  /** Each group's positions, translated from the old offsets to the new. */
  groups: { groupId: string; partitions: { partition: number; from: string; to: string }[] }[];
  /** The step a run before this one had recorded, when it is taken up again. */
  resumedAfter?: TopicRewriteState['step'];
}

/** Beside the topic, under its name: what the copy is of is plain to anyone who lists the topics. */
export const STAGING_SUFFIX = '.rewriting';
/** The header that carries a record's offset in the original topic through the staging copy (not copied back). */
const ORIGINAL_OFFSET = 'rsd-original-offset';
/** A read of a topic that makes no progress this long has met something it cannot pass. */
const STALL_MS = 30_000;
const TOPIC_SETTLE_MS = 60_000;

/**
 * Rewrites every record of a topic (decision 56: a log written before sealing, sealed), although a
 * Kafka record cannot be changed: the topic is copied with each value rewritten (keys, headers,
 * timestamps, partitions and order kept) into a staging topic of the same layout; the copy is checked
 * (each partition holds the same records, by their original offsets); the committed positions of
 * every consumer group in the topic are recorded with the layout; the topic is deleted, created again
 * as it was, and the staging copy copied back; each group's position is translated through the old
 * offset → new offset map (they differ where the old topic had gaps: deleted records, transaction
 * markers) and set; the staging topic is deleted. The groups must be empty (the product stopped): a
 * group with members is refused at each step that needs it.
 *
 * A crash at any point loses nothing: the topic is deleted only once the staging copy is complete,
 * checked and recorded in the journal, and a new run takes up the recorded step (a copy cut short,
 * never recorded, is made again from the start).
 */
export async function rewriteTopic(topic: string, options: TopicRewriteOptions): Promise<TopicRewriteReport> {
  const { admin, journal } = options;
  const progress = options.progress ?? (() => undefined);
  const staging = `${topic}${STAGING_SUFFIX}`;
  let state = await journal.read(topic);
  const resumedAfter = state?.step;
  if (!state) {
    if (!(await exists(admin, topic))) {
      throw new Error(`Kafka topic "${topic}" does not exist: there is nothing to rewrite (is KAFKA_BROKERS the product's cluster?)`);
    }
    await refuseGroupsWithMembers(
      admin,
      topic,
      (await groupsIn(admin, topic)).map((group) => group.groupId),
    );
    const probed = await probe(topic, options);
    if (!probed.needed) return { topic, rewritten: false, records: probed.records, outcomes: probed.outcomes, groups: [] };
    state = await attempts(() => copyToStaging(topic, staging, options));
    await journal.write(state);
    progress(`${topic}: copied into ${staging} and checked (${sum(state.records)} records)`);
    if (options.crashAfter === 'copied') throw new Error('stopped after the staging copy, as asked');
  }
  let groups: TopicRewriteReport['groups'] = [];
  if (state.step === 'copied') {
    if (!(await exists(admin, staging))) {
      throw new Error(
        `the rewrite of "${topic}" was recorded as copied into "${staging}", which no longer exists: the topic may be incomplete. ` +
          'Restore it from a backup of the cluster, then remove the record of the rewrite (collection log_rewrites) and run this again.',
      );
    }
    await refuseGroupsWithMembers(
      admin,
      topic,
      state.groups.map((group) => group.groupId),
    );
    if (await exists(admin, topic)) await deleteTopic(admin, topic);
    if (options.crashAfter === 'deleted') throw new Error('stopped after deleting the topic, as asked');
    const copied = state;
    const map = await attempts(async () => {
      if (await exists(admin, topic)) await deleteTopic(admin, topic);
      await createTopic(admin, topic, copied.layout);
      return copyBack(staging, topic, copied, options);
    });
    groups = await translateGroups(admin, topic, state.groups, map);
    state = { ...state, step: 'restored' };
    await journal.write(state);
    progress(`${topic}: rewritten, ${groups.length} consumer group(s) moved to the new offsets`);
  }
  if (await exists(admin, staging)) await deleteTopic(admin, staging);
  await journal.remove(topic);
  return {
    topic,
    rewritten: true,
    records: sum(state.records),
    outcomes: state.outcomes,
    groups,
    ...(resumedAfter ? { resumedAfter } : {}),
  };
}

/** A copy that does not hold what it copied: made again, from a topic made again. */
class CopyMismatchError extends Error {
  override name = 'CopyMismatchError';
}

/**
 * A copy made again when its check fails, twice at most: an idempotent producer's send retried on a
 * topic just created can still be written twice (its first attempt answered late), which the check
 * sees; records written meanwhile by a product still running fail every attempt, and are reported.
 */
async function attempts<T>(copy: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await copy();
    } catch (error) {
      if (!(error instanceof CopyMismatchError) || attempt >= 3) throw error;
    }
  }
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

async function exists(admin: Admin, topic: string): Promise<boolean> {
  return (await admin.listTopics()).includes(topic);
}

/** Reads to the first record that would be rewritten; all of them when none would, counting what would be done. */
async function probe(
  topic: string,
  options: TopicRewriteOptions,
): Promise<{ needed: boolean; records: number; outcomes: Record<string, number> }> {
  const outcomes: Record<string, number> = {};
  let records = 0;
  let needed = false;
  await readTopic(options, topic, async (_partition, messages) => {
    for (const message of messages) {
      const value = message.value?.toString();
      if (value === undefined) continue;
      const probed = await options.probe(value);
      if (probed.value !== value) {
        needed = true;
        return 'stop';
      }
      outcomes[probed.outcome] = (outcomes[probed.outcome] ?? 0) + 1;
      records += 1;
    }
    return 'go on';
  });
  return { needed, records, outcomes };
}

async function copyToStaging(topic: string, staging: string, options: TopicRewriteOptions): Promise<TopicRewriteState> {
  const { admin } = options;
  const layout = await layoutOf(admin, topic);
  // A copy a crash cut short was never recorded: it is made again from the start.
  if (await exists(admin, staging)) await deleteTopic(admin, staging);
  await createTopic(admin, staging, layout);
  const outcomes: Record<string, number> = {};
  const copied = new Map<number, string[]>();
  const producer = await connectedProducer(options.kafka);
  try {
    await readTopic(options, topic, async (partition, messages) => {
      const out: Message[] = [];
      for (const message of messages) {
        let value = message.value;
        if (value !== null) {
          const rewritten = await options.rewrite(value.toString());
          outcomes[rewritten.outcome] = (outcomes[rewritten.outcome] ?? 0) + 1;
          value = Buffer.from(rewritten.value);
        }
        out.push({ ...keptOf(message, partition), value, headers: { ...message.headers, [ORIGINAL_OFFSET]: message.offset } });
        (copied.get(partition) ?? copied.set(partition, []).get(partition)!).push(message.offset);
      }
      await sendInOrder(producer, staging, out);
      options.progress?.(`${topic}: partition ${partition} copied up to offset ${messages.at(-1)?.offset ?? '-'}`);
      return 'go on';
    });
  } finally {
    await producer.disconnect();
  }
  // The check: every partition of the copy holds the original's records, in order, by their offsets.
  const inStaging = new Map<number, string[]>();
  await readTopic(options, staging, (partition, messages) => {
    const offsets = inStaging.get(partition) ?? inStaging.set(partition, []).get(partition)!;
    for (const message of messages) offsets.push(originalOffsetOf(message));
    return Promise.resolve('go on');
  });
  const records: number[] = [];
  for (let partition = 0; partition < layout.partitions; partition += 1) {
    const original = copied.get(partition) ?? [];
    const copy = inStaging.get(partition) ?? [];
    if (original.length !== copy.length || original.some((offset, index) => offset !== copy[index])) {
      throw new CopyMismatchError(
        `the copy of "${topic}" in "${staging}" differs from it in partition ${partition} (${copy.length} records of ${original.length}): ` +
          'records were written meanwhile (is the product still running?); nothing was deleted, run this again once it is stopped',
      );
    }
    records.push(original.length);
  }
  // Recorded after the copy, so no group had moved meanwhile without being refused next.
  const groups = await groupsIn(admin, topic);
  await refuseGroupsWithMembers(
    admin,
    topic,
    groups.map((group) => group.groupId),
  );
  return { topic, staging, step: 'copied', layout, groups, records, outcomes };
}

/**
 * The staging copy written into the new topic, its header dropped; then the new topic read back:
 * answers, per partition, the new offset of each old one in order (the i-th record of a partition
 * is the staging copy's i-th), checked to hold as many records as the copy.
 */
async function copyBack(
  staging: string,
  topic: string,
  state: TopicRewriteState,
  options: TopicRewriteOptions,
): Promise<Map<number, OffsetMap>> {
  const map = new Map<number, OffsetMap>();
  const entryOf = (partition: number) => map.get(partition) ?? map.set(partition, { from: [], to: [] }).get(partition)!;
  const producer = await connectedProducer(options.kafka);
  try {
    await readTopic(options, staging, async (partition, messages) => {
      const out = messages.map((message) => {
        const { [ORIGINAL_OFFSET]: _original, ...headers } = message.headers ?? {};
        entryOf(partition).from.push(BigInt(originalOffsetOf(message)));
        return { ...keptOf(message, partition), value: message.value, headers };
      });
      await sendInOrder(producer, topic, out);
      return 'go on';
    });
  } finally {
    await producer.disconnect();
  }
  await readTopic(options, topic, (partition, messages) => {
    entryOf(partition).to.push(...messages.map((message) => BigInt(message.offset)));
    return Promise.resolve('go on');
  });
  for (const { partition, high } of await options.admin.fetchTopicOffsets(topic)) {
    const entry = entryOf(partition);
    if (entry.to.length !== (state.records[partition] ?? 0) || entry.from.length !== entry.to.length) {
      throw new CopyMismatchError(
        `"${topic}" holds other records than its staging copy in partition ${partition} after the copy back: run this again`,
      );
    }
    entry.end = BigInt(high);
  }
  return map;
}

interface OffsetMap {
  from: bigint[];
  to: bigint[];
  end?: bigint;
}

/**
 * A committed position is the offset of the next record to read: it becomes the new offset of the
 * first old record at or after it, or the new end when it was at the old end.
 */
async function translateGroups(
  admin: Admin,
  topic: string,
  groups: GroupPositions[],
  map: Map<number, OffsetMap>,
): Promise<TopicRewriteReport['groups']> {
  const translated: TopicRewriteReport['groups'] = [];
  for (const { groupId, offsets } of groups) {
    const partitions = offsets.map(({ partition, offset }) => {
      const { from, to, end } = map.get(partition) ?? { from: [], to: [], end: 0n };
      const at = firstAtOrAfter(from, BigInt(offset));
      return { partition, from: offset, to: String(at < to.length ? to[at]! : (end ?? 0n)) };
    });
    await admin.setOffsets({ groupId, topic, partitions: partitions.map(({ partition, to }) => ({ partition, offset: to })) });
    translated.push({ groupId, partitions });
  }
  return translated;
}

function firstAtOrAfter(sorted: readonly bigint[], value: bigint): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** What a copy keeps of a record besides its value and headers: its key, its timestamp and its partition. */
function keptOf(message: KafkaMessage, partition: number): Pick<Message, 'key' | 'timestamp' | 'partition'> {
  return { key: message.key, timestamp: message.timestamp, partition };
}

function originalOffsetOf(message: KafkaMessage): string {
  const header = message.headers?.[ORIGINAL_OFFSET];
  if (header === undefined)
    throw new Error(`a record of a staging topic has no ${ORIGINAL_OFFSET} header: the topic is not a staging copy`);
  return header.toString();
}

async function connectedProducer(kafka: Kafka): Promise<Producer> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await producer.connect();
  return producer;
}

/** Messages of one partition sent in order, in parts a broker takes. */
async function sendInOrder(producer: Producer, topic: string, messages: Message[]): Promise<void> {
  const sizeOf = (message: Message) => byteLength(message.key) + byteLength(message.value) + headerBytes(message.headers);
  for (const part of inParts(messages, sizeOf)) await producer.send({ topic, acks: -1, messages: part });
}

const byteLength = (value: Buffer | string | null | undefined) => (value === null || value === undefined ? 0 : Buffer.byteLength(value));
const headerBytes = (headers: IHeaders | undefined) =>
  Object.entries(headers ?? {}).reduce((total, [name, value]) => total + name.length + byteLength(value as Buffer | string | undefined), 0);

type PartitionBatch = (partition: number, messages: KafkaMessage[]) => Promise<'go on' | 'stop'>;

/**
 * Every record of the topic, as it is now (to the end offsets of when the read began), handed over a
 * batch of one partition at a time, in order, through a consumer group of its own that commits nothing
 * and is deleted after.
 */
async function readTopic(options: Pick<TopicRewriteOptions, 'kafka' | 'admin'>, topic: string, handle: PartitionBatch): Promise<void> {
  const ends = await options.admin.fetchTopicOffsets(topic);
  const remaining = new Map(
    ends.filter(({ low, high }) => BigInt(high) > BigInt(low)).map(({ partition, high }) => [partition, BigInt(high)]),
  );
  if (remaining.size === 0) return;
  const groupId = `rsd-log-rewrite-${randomUUID()}`;
  const consumer = options.kafka.consumer({ groupId, allowAutoTopicCreation: false, maxWaitTimeInMs: 100 });
  let settled = false;
  let settle: (error?: Error) => void = () => undefined;
  const done = new Promise<void>((resolve, reject) => {
    settle = (error) => {
      settled = true;
      if (error === undefined) resolve();
      else reject(error);
    };
  });
  let movedAt = Date.now();
  const stall = setInterval(() => {
    if (Date.now() - movedAt > STALL_MS) {
      settle(
        new Error(
          `reading "${topic}" made no progress for ${STALL_MS / 1000} s (partitions ${[...remaining.keys()].join(', ')} unfinished)`,
        ),
      );
    }
  }, 1_000);
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const end = remaining.get(batch.partition);
        if (end === undefined || settled) return;
        const messages = batch.messages.filter((message) => BigInt(message.offset) < end);
        movedAt = Date.now();
        try {
          if (messages.length > 0 && (await handle(batch.partition, messages)) === 'stop') return settle();
        } catch (error) {
          return settle(error instanceof Error ? error : new Error(String(error)));
        }
        if (BigInt(batch.lastOffset()) + 1n >= end) remaining.delete(batch.partition);
        if (remaining.size === 0) settle();
      },
    });
    await done;
  } finally {
    clearInterval(stall);
    await consumer.disconnect();
    await retryWhilePassing(() => options.admin.deleteGroups([groupId])).catch(() => undefined);
  }
}

/** Every consumer group with a committed position in the topic (the rewrite's own readers commit none). */
async function groupsIn(admin: Admin, topic: string): Promise<GroupPositions[]> {
  const { groups } = await admin.listGroups();
  const found: GroupPositions[] = [];
  for (let at = 0; at < groups.length; at += 20) {
    await Promise.all(
      groups.slice(at, at + 20).map(async ({ groupId }) => {
        const answer = await retryWhilePassing(() => admin.fetchOffsets({ groupId, topics: [topic] }));
        const offsets = answer
          .flatMap(({ partitions }) => partitions)
          .filter(({ offset }) => BigInt(offset) >= 0n)
          .map(({ partition, offset }) => ({ partition, offset }));
        if (offsets.length > 0) found.push({ groupId, offsets });
      }),
    );
  }
  return found.sort((a, b) => a.groupId.localeCompare(b.groupId));
}

async function refuseGroupsWithMembers(admin: Admin, topic: string, groupIds: string[]): Promise<void> {
  if (groupIds.length === 0) return;
  const { groups } = await admin.describeGroups(groupIds);
  const active = groups.filter((group) => group.members.length > 0).map((group) => `${group.groupId} (${group.members.length} member(s))`);
  if (active.length > 0) {
    throw new Error(
      `"${topic}" is being read: consumer group(s) ${active.join(', ')} are running. The log is rewritten with the product stopped: ` +
        'stop every service (and any rebuild-views), then run this again; it takes up where it stopped.',
    );
  }
}

async function layoutOf(admin: Admin, topic: string): Promise<TopicLayout> {
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
  const partitions = topics[0]?.partitions ?? [];
  const { resources } = await admin.describeConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
    includeSynonyms: false,
  });
  const configEntries = (resources[0]?.configEntries ?? [])
    .filter((entry) => entry.configSource === ConfigSource.TOPIC_CONFIG && !entry.isDefault)
    .map((entry) => ({ name: entry.configName, value: entry.configValue }));
  return { partitions: partitions.length, replicationFactor: partitions[0]?.replicas.length ?? 1, configEntries };
}

/** Deleted, and gone from the cluster's list (a deletion completes in the background). */
async function deleteTopic(admin: Admin, topic: string): Promise<void> {
  await admin.deleteTopics({ topics: [topic], timeout: 30_000 });
  await until(async () => !(await exists(admin, topic)), `"${topic}" to be deleted`);
}

/** Created with the layout, once a deletion of the same name has completed (until then the broker answers that it exists). */
async function createTopic(admin: Admin, topic: string, layout: TopicLayout): Promise<void> {
  await until(
    () =>
      admin.createTopics({
        waitForLeaders: true,
        timeout: 10_000,
        topics: [
          { topic, numPartitions: layout.partitions, replicationFactor: layout.replicationFactor, configEntries: layout.configEntries },
        ],
      }),
    `"${topic}" to be created`,
  );
  await until(async () => (await admin.fetchTopicOffsets(topic)).length === layout.partitions, `"${topic}"'s partitions to have leaders`);
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const giveUpAt = Date.now() + TOPIC_SETTLE_MS;
  while (!(await retryWhilePassing(condition).catch(() => false))) {
    if (Date.now() > giveUpAt) throw new Error(`waited ${TOPIC_SETTLE_MS / 1000} s for ${what}`);
    await delay(250);
  }
}
