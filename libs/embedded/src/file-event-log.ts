import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { EventLog, EventRecord, OutgoingRecord } from '@rsd/ports';
import { silentLogger, type EmbeddedLogger } from './embedded-logger';
import { formatLines, replayLogFile, type LoggedLine } from './event-log-replay';
import { EventLogSubscription, isInsideHandler } from './event-log-subscription';

export interface FileEventLogOptions {
  file: string;
  log?: EmbeddedLogger;
  /** How long `append` waits for live subscribers before answering anyway; the records are durable by then. */
  deliveryTimeoutMs?: number;
}

const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;

/**
 * The embedded event log: one append-only NDJSON file, replayed into memory at open. Every topic
 * has a single partition (0) and a record's offset is its index within its topic.
 *
 * Group ids are accepted but positions are not stored: the embedded views are rebuilt from offset
 * zero at every start, and each subscription receives every record of its topics.
 */
export async function openFileEventLog(options: FileEventLogOptions): Promise<EventLog> {
  const { file } = options;
  const log = options.log ?? silentLogger;
  const deliveryTimeoutMs = options.deliveryTimeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;

  await mkdir(dirname(file), { recursive: true });
  const records: EventRecord[] = [];
  const topicSizes = new Map<string, number>();
  const subscriptions = new Set<EventLogSubscription>();
  for (const line of await replayLogFile(file, log)) remember(line);

  const handle = await open(file, 'a');
  let size = (await handle.stat()).size;
  let writes: Promise<unknown> = Promise.resolve();
  let closed = false;
  let broken: unknown;

  /** Adds a line to memory and returns its index in the whole log. */
  function remember(line: LoggedLine): number {
    const offset = topicSizes.get(line.topic) ?? 0;
    topicSizes.set(line.topic, offset + 1);
    return records.push({ topic: line.topic, partition: 0, offset: String(offset), key: line.key, value: line.value }) - 1;
  }

  async function writeDurably(topic: string, outgoing: readonly OutgoingRecord[]): Promise<number> {
    if (broken) throw new Error('the event log file could not be restored after a failed write', { cause: broken });
    const lines = outgoing.map(({ key, value }) => ({ topic, key, value }));
    const bytes = Buffer.from(formatLines(lines));
    try {
      await handle.appendFile(bytes);
      await handle.datasync();
    } catch (error) {
      await undoPartialWrite();
      throw error;
    }
    size += bytes.length;
    let last = -1;
    for (const line of lines) last = remember(line);
    for (const subscription of subscriptions) subscription.notify();
    return last;
  }

  /** A half-written line would make every later record unreadable, so the file goes back to its last good size. */
  async function undoPartialWrite(): Promise<void> {
    try {
      await handle.truncate(size);
    } catch (error) {
      broken = error;
    }
  }

  /** Read-your-writes in one process: the caller answers only after the live projections saw its records. */
  async function awaitDelivery(topic: string, lastIndex: number): Promise<void> {
    const delivered = [...subscriptions].filter((s) => s.follows(topic)).map((s) => s.handled(lastIndex));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), deliveryTimeoutMs)));
    try {
      if (await Promise.race([Promise.all(delivered).then(() => false), timedOut])) {
        log.warn({ topic, deliveryTimeoutMs }, 'subscribers have not handled appended records in time; answering anyway');
      }
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async append(topic, outgoing) {
      if (closed) throw new Error('the event log is closed');
      if (outgoing.length === 0) return;
      const written = writes.then(() => writeDurably(topic, outgoing));
      writes = written.catch(() => undefined);
      const lastIndex = await written;
      // Inside a handler (a projector dead-lettering, say), waiting for delivery could wait on
      // the very subscription that is running it, directly or through another one: durable is enough.
      if (!isInsideHandler()) await awaitDelivery(topic, lastIndex);
    },

    subscribe(subscribeOptions) {
      if (closed) return Promise.reject(new Error('the event log is closed'));
      const subscription = new EventLogSubscription(records, subscribeOptions, log, (s) => subscriptions.delete(s));
      subscriptions.add(subscription);
      return Promise.resolve(subscription);
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((subscription) => subscription.close()));
      await writes;
      await handle.close();
    },
  };
}
