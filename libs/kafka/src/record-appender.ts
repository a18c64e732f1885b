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
 * Sends each append as one produce request acknowledged by all in-sync replicas (an append larger
 * than a broker takes in one batch, in parts: `sendSized`; a failure after some parts were written
 * fails the append, whose retry writes those again, as a retry after a lost acknowledgement does,
 * and consumers apply each event once). The producer is
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
        const sending = await using;
        for (const part of sendSized(records)) {
          await sending.send({
            topic,
            acks: -1,
            timeout: settings.ackTimeoutMs,
            messages: part.map(({ key, value }) => ({ key, value })),
          });
        }
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

/**
 * A broker refuses a record batch over its `message.max.bytes` (1 MiB by default) with
 * MESSAGE_TOO_LARGE, and a retry of the same append would be refused again for ever (a replay that
 * dead-letters hundreds of sealed events at once met it). Appends are sent in parts of at most this
 * many bytes of keys and values, in order; one record larger than that goes alone.
 */
export const SEND_PART_BYTES = 512 * 1024;
/** What each record costs a batch beyond its key and value (its header, offsets, lengths; generous). */
const RECORD_OVERHEAD_BYTES = 64;

/** `records` in order, cut into parts of at most SEND_PART_BYTES (a part always holds one record at least). */
export function sendSized(records: readonly OutgoingRecord[], limit = SEND_PART_BYTES): OutgoingRecord[][] {
  return inParts(records, (record) => Buffer.byteLength(record.key) + Buffer.byteLength(record.value), limit);
}

/** `items` in order, cut into parts whose sizes (`sizeOf` and each item's overhead) add up to at most `limit`; one larger item goes alone. */
export function inParts<T>(items: readonly T[], sizeOf: (item: T) => number, limit = SEND_PART_BYTES): T[][] {
  const parts: T[][] = [];
  let part: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item) + RECORD_OVERHEAD_BYTES;
    if (part.length > 0 && bytes + size > limit) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(item);
    bytes += size;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}
