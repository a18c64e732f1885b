import type { ConsumerConfig, KafkaConfig } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventLog } from '@rsd/ports';
import { createKafkaClient } from './kafka-client';
import { subscribeWithKafka, type KafkaSubscription } from './kafka-subscription';
import { createRecordAppender } from './record-appender';
import { createTopicAdmin, type TopicSettings } from './topic-admin';

export interface KafkaEventLogOptions {
  brokers: string[];
  clientId: string;
  log: Logger;
  /** The topics created at start-up, and the layout of every topic this log creates. */
  topics: TopicSettings & { names: readonly string[] };
  /** Overrides of the client settings below (TLS, SASL, timeouts). */
  kafka?: Partial<KafkaConfig>;
}

export interface KafkaEventLog extends EventLog {
  /** Creates the topics that are missing (with the configured layout); existing ones are left alone. */
  ensureTopics(names: readonly string[]): Promise<void>;
  /** Resolves when a broker answers a metadata request: the readiness check. */
  ping(): Promise<void>;
  /**
   * Records the group has not committed yet, summed over the partitions of `topics` (default: the
   * topics the group has committed positions in).
   */
  lag(groupId: string, topics?: readonly string[]): Promise<number>;
}

/**
 * Consumers have nobody waiting on them, so they retry longer before kafkajs restarts them, and
 * keep polls short so a record reaches its handler within milliseconds.
 */
const CONSUMER_SETTINGS: Omit<ConsumerConfig, 'groupId'> = {
  sessionTimeout: 10_000,
  heartbeatInterval: 1_000,
  rebalanceTimeout: 15_000,
  maxWaitTimeInMs: 100,
  allowAutoTopicCreation: false,
  retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 5_000 },
};

/**
 * A follower that tracks its freshness serves reads from what it has seen (decision 29): after an
 * outage every second it spends in kafkajs' backoff is a second a revocation answered 200 may go
 * unenforced, so it retries at most a second apart rather than on kafkajs' longer backoff.
 */
const LIVE_FOLLOWER_SETTINGS: Omit<ConsumerConfig, 'groupId'> = {
  ...CONSUMER_SETTINGS,
  retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1_000 },
};

export async function openKafkaEventLog(options: KafkaEventLogOptions): Promise<KafkaEventLog> {
  const log = options.log.child({ component: 'kafka-event-log' });
  const { kafka, appender: appenderSettings } = createKafkaClient(options);
  const admin = kafka.admin();
  const topics = createTopicAdmin(admin, options.topics, log, options.brokers.length);
  const appender = createRecordAppender(kafka, appenderSettings, log);
  const subscriptions = new Set<KafkaSubscription>();
  let closed = false;

  try {
    await admin.connect();
    await topics.ensureTopics(options.topics.names);
    await appender.connect();
  } catch (error) {
    await Promise.allSettled([appender.close(), admin.disconnect()]);
    throw error;
  }

  function assertOpen(): void {
    if (closed) throw new Error('the event log is closed');
  }

  return {
    async append(topic, records) {
      assertOpen();
      if (records.length === 0) return;
      await topics.assertTopicsExist([topic]);
      await appender.append(topic, records);
    },

    async subscribe(subscribeOptions) {
      assertOpen();
      const subscription = await subscribeWithKafka(
        {
          kafka,
          topics,
          consumerConfig: subscribeOptions.trackFreshness ? LIVE_FOLLOWER_SETTINGS : CONSUMER_SETTINGS,
          log,
          onClose: (s) => subscriptions.delete(s),
        },
        subscribeOptions,
      );
      if (closed) {
        await subscription.close();
        throw new Error('the event log was closed while subscribing');
      }
      subscriptions.add(subscription);
      return subscription;
    },

    ensureTopics: (names) => topics.ensureTopics(names),
    ping: () => topics.ping(),
    lag: (groupId, lagTopics) => topics.lag(groupId, lagTopics),

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((subscription) => subscription.close()));
      await appender.close();
      await admin.disconnect();
    },
  };
}
