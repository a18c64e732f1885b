import type { AccessRecord } from '@rsd/contracts';
import type { Logger } from '@rsd/platform';

export interface AccessRecorderOptions {
  /** The stream: one batch per call; a rejection keeps the batch for the next attempt. */
  publish: (records: readonly AccessRecord[]) => Promise<void>;
  /** Records held while the stream is slow or away; beyond this, new records are dropped and counted. */
  maxBuffered: number;
  /** A batch goes out as soon as this many are waiting, and never larger. */
  batchSize: number;
  /** Whatever is waiting goes out at least this often. */
  flushIntervalMs: number;
  log: Logger;
  metrics?: {
    published(count: number): void;
    publishFailed(): void;
    dropped(reason: 'buffer_full' | 'shutdown', count: number): void;
    buffered(count: number): void;
  };
}

export interface AccessRecorder {
  /** Never waits, never throws: the request path only hands the record over. A plain function, to pass around. */
  record: (record: AccessRecord) => void;
  /** Publishes what is waiting, a batch at a time, until none is left or a publish fails. */
  flush(): Promise<void>;
  /** Stops taking records, publishes what it holds until `deadlineMs`, and counts the rest as dropped. */
  stop(deadlineMs: number): Promise<void>;
  readonly buffered: number;
  readonly dropped: number;
}

/** A full buffer is logged at most this often; the metric counts every record. */
const DROP_WARNING_INTERVAL_MS = 10_000;

/**
 * Decision 21 off the request path. A request hands its record over when its answer is finished;
 * whatever waits goes to the stream every `flushIntervalMs`, and a whole batch as soon as
 * `batchSize` are waiting, one publish at a time. While the stream cannot take them they wait in a
 * bounded buffer (oldest first, so the stream gets them in order when it is back); once the buffer
 * is full, new records are dropped and counted (`access_log_dropped_total`). A read is never delayed
 * or failed by its record.
 */
export function createAccessRecorder(options: AccessRecorderOptions): AccessRecorder {
  const { publish, maxBuffered, batchSize, flushIntervalMs, log, metrics } = options;
  let buffer: AccessRecord[] = [];
  let flushing: Promise<void> | undefined;
  let flushSoon = false;
  /** Set by flush(): the publish under way goes on past whole batches, to the last record. */
  let drainAll = false;
  let stopped = false;
  let dropped = 0;
  let streamAway = false;
  let lastDropWarning = Number.NEGATIVE_INFINITY;

  const timer = setInterval(() => void flush(), flushIntervalMs).unref();

  function drop(reason: 'buffer_full' | 'shutdown', count: number): void {
    dropped += count;
    metrics?.dropped(reason, count);
  }

  /**
   * Whole batches only, unless a flush asked for everything: publishing whatever had arrived during
   * the last publish would send a small batch per round trip to the stream under load, and each
   * message costs the read API its encoding and system calls.
   */
  async function publishWaiting(): Promise<void> {
    while (buffer.length >= batchSize || (drainAll && buffer.length > 0)) {
      const batch = buffer.slice(0, batchSize);
      try {
        await publish(batch);
      } catch (error) {
        metrics?.publishFailed();
        if (!streamAway)
          log.warn({ err: error, buffered: buffer.length }, 'the access-log stream cannot take records; keeping them and trying again');
        streamAway = true;
        return;
      }
      buffer = buffer.slice(batch.length);
      metrics?.published(batch.length);
      if (streamAway) log.info({ buffered: buffer.length }, 'the access-log stream takes records again');
      streamAway = false;
    }
  }

  /** Everything waiting, a batch at a time; a publish of whole batches already under way carries on to the end. */
  function flush(): Promise<void> {
    drainAll = true;
    return publishing();
  }

  function publishing(): Promise<void> {
    flushing ??= publishWaiting().finally(() => {
      flushing = undefined;
      drainAll = false;
      metrics?.buffered(buffer.length);
    });
    return flushing;
  }

  return {
    record(record) {
      if (stopped) {
        drop('shutdown', 1);
        return;
      }
      if (buffer.length >= maxBuffered) {
        drop('buffer_full', 1);
        const now = Date.now();
        if (now - lastDropWarning >= DROP_WARNING_INTERVAL_MS) {
          lastDropWarning = now;
          log.warn({ buffered: buffer.length, dropped }, 'access-log buffer full: dropping access records');
        }
        return;
      }
      buffer.push(record);
      // A full batch goes out at once, but after the current request's turn: never inside it.
      if (buffer.length >= batchSize && !flushing && !flushSoon && !streamAway) {
        flushSoon = true;
        setImmediate(() => {
          flushSoon = false;
          void publishing();
        });
      }
    },

    flush,

    async stop(deadlineMs) {
      stopped = true;
      clearInterval(timer);
      const giveUpAt = Date.now() + deadlineMs;
      while (buffer.length > 0 && Date.now() < giveUpAt) {
        await Promise.race([flush(), new Promise((resolve) => setTimeout(resolve, Math.max(0, giveUpAt - Date.now())).unref())]);
        if (streamAway) break;
      }
      if (buffer.length > 0) {
        log.warn({ count: buffer.length }, 'access records not published before shutdown');
        drop('shutdown', buffer.length);
        buffer = [];
      }
    },

    get buffered() {
      return buffer.length;
    },

    get dropped() {
      return dropped;
    },
  };
}
