import { randomUUID } from 'node:crypto';
import { ConfigResourceTypes, type Admin, type KafkaConfig } from 'kafkajs';
import type { Logger } from 'pino';
import { ACCESS_LOG_TOPIC, type AccessRecord } from '@rsd/contracts';
import { sealAccessRecords, type EventCipher } from '@rsd/consumers';
import { createKafkaClient } from './kafka-client';
import { createRecordAppender } from './record-appender';
import { replicationOf, retryWhilePassing, type Replication, type TopicSettings } from './topic-admin';

export interface KafkaAccessLogOptions {
  brokers: string[];
  clientId: string;
  log: Logger;
  /** Layout of the topic when this process creates it. */
  layout: TopicSettings;
  retentionDays: number;
  /** ACCESS_LOG_TOPIC unless a test names its own. */
  topic?: string;
  /** Overrides of the client settings below (TLS, SASL, a test's socket factory). */
  kafka?: Partial<KafkaConfig>;
  /**
   * Decision 56: the subject cipher that seals each batch's addresses under their grants' keys as it is
   * published (the runtime's, always given there); without it, records go out as they are.
   */
  cipher?: Pick<EventCipher, 'sealJson'>;
}

export interface KafkaAccessLogPublisher {
  readonly topic: string;
  /** One message per batch; rejects within a few seconds when the brokers cannot take it. */
  publish(records: readonly AccessRecord[]): Promise<void>;
  close(): Promise<void>;
}

const CREATE_TOPIC_TIMEOUT_MS = 10_000;

/**
 * Decision 21's stream on Kafka: a topic of its own, created at start-up with time-based retention
 * (`retention.ms` = the access log's retention, set again at start-up when it was changed), apart
 * from the event store's topics, which keep everything. A client of its own, so that a stream in
 * trouble never touches the event log's producer.
 */
export async function openKafkaAccessLog(options: KafkaAccessLogOptions): Promise<KafkaAccessLogPublisher> {
  const log = options.log.child({ component: 'kafka-access-log' });
  const topic = options.topic ?? ACCESS_LOG_TOPIC;
  // The read API's recorder keeps what a failed publish held and tries again: the client's fail-fast settings suit it.
  const { kafka, appender: appenderSettings } = createKafkaClient(options);
  const admin = kafka.admin();
  try {
    await admin.connect();
    // A topic just created may not be hosted yet ("This server does not host this topic-partition"): asked again, it is there.
    await retryWhilePassing(async () => {
      const replication = await replicationOf(admin, options.layout, options.brokers.length);
      await ensureAccessLogTopic(
        admin,
        topic,
        { partitions: options.layout.partitions, ...replication },
        options.retentionDays * 86_400_000,
        log,
      );
    });
  } finally {
    await admin.disconnect();
  }
  const appender = createRecordAppender(kafka, appenderSettings, log);
  await appender.connect();
  // A batch holds many Client IDs and needs no order: one key per process spreads replicas over partitions.
  const key = randomUUID();

  return {
    topic,
    async publish(records) {
      if (records.length === 0) return;
      const value = options.cipher ? await sealAccessRecords(records, options.cipher) : JSON.stringify({ records });
      await appender.append(topic, [{ key, value }]);
    },
    close: () => appender.close(),
  };
}

async function ensureAccessLogTopic(
  admin: Admin,
  topic: string,
  layout: { partitions: number } & Replication,
  retentionMs: number,
  log: Logger,
): Promise<void> {
  const configEntries = [
    { name: 'cleanup.policy', value: 'delete' },
    { name: 'retention.ms', value: String(retentionMs) },
  ];
  if (!(await admin.listTopics()).includes(topic)) {
    const { partitions, replicationFactor } = layout;
    // False when another process created it first; its retention is checked at that process's start too.
    await admin.createTopics({
      waitForLeaders: true,
      timeout: CREATE_TOPIC_TIMEOUT_MS,
      topics: [{ topic, numPartitions: partitions, replicationFactor, configEntries: [...configEntries, ...layout.configEntries] }],
    });
    log.info({ topic, retentionMs, partitions, replicationFactor }, 'created the access-log topic');
    return;
  }
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms', 'cleanup.policy'] }],
  });
  const entries = described.resources[0]?.configEntries ?? [];
  const current = (name: string) => entries.find((entry) => entry.configName === name)?.configValue;
  if (current('retention.ms') === String(retentionMs) && current('cleanup.policy') === 'delete') return;
  await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries }] });
  log.info({ topic, retentionMs, was: current('retention.ms') }, 'set the access-log topic retention');
}
