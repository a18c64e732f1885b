import { Partitioners, type Kafka, type Producer, type RetryOptions } from 'kafkajs';
import type { Logger } from 'pino';
import { UnavailableError } from '@rsd/platform';
import type { OutgoingRecord } from '@rsd/ports';

export interface AppenderSettings {
  retry: RetryOptions;
  /** How long the broker may wait for the in-sync replicas to acknowledge. */
  ackTimeoutMs: number;
}

export interface RecordAppender {
  connect(): Promise<void>;
  append(topic: string, records: readonly OutgoingRecord[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Sends each append as one produce request acknowledged by all in-sync replicas. The producer is
 * idempotent, so its own retries never write a record twice. After a send fails for good, the
 * producer is replaced: the broker may still have written that batch, and kafkajs would number
 * the next batch as if it had not, so the broker could take new records for a duplicate and drop
 * them. A fresh producer id cannot collide.
 */
export function createRecordAppender(kafka: Kafka, settings: AppenderSettings, log: Logger): RecordAppender {
  let current: Promise<Producer> | undefined;
  const retiring = new Set<Promise<void>>();

  function producer(): Promise<Producer> {
    if (!current) {
      const connecting = connectProducer();
      current = connecting;
      connecting.catch(() => {
        if (current === connecting) current = undefined;
      });
    }
    return current;
  }

  async function connectProducer(): Promise<Producer> {
    const created = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: settings.retry,
    });
    await created.connect();
    return created;
  }

  function retire(failed: Promise<Producer>): void {
    if (current !== failed) return;
    current = undefined;
    const disconnecting = failed
      .then((stale) => stale.disconnect())
      .catch((error: unknown) => log.warn({ err: error }, 'could not disconnect a failed Kafka producer'))
      .finally(() => retiring.delete(disconnecting));
    retiring.add(disconnecting);
  }

  return {
    async connect() {
      await producer();
    },

    async append(topic, records) {
      const using = producer();
      try {
        await (
          await using
        ).send({
          topic,
          acks: -1,
          timeout: settings.ackTimeoutMs,
          messages: records.map(({ key, value }) => ({ key, value })),
        });
      } catch (error) {
        retire(using);
        const reason = error instanceof Error ? error.message : String(error);
        // What a producer's send throws is Kafka out of reach or not taking writes now: callers answer 503 or retry.
        throw new UnavailableError('kafka', {
          cause: error,
          detail: `appending ${records.length} record(s) to Kafka topic "${topic}" failed: ${reason}`,
        });
      }
    },

    async close() {
      if (current) retire(current);
      await Promise.all(retiring);
    },
  };
}
