import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventRecord, SubscribeOptions, Subscription } from '@rsd/ports';
import type { EmbeddedLogger } from './embedded-logger';

const RETRY_FIRST_DELAY_MS = 100;
const RETRY_MAX_DELAY_MS = 5_000;

/** Which subscription's handler the current async call chain runs in, if any. */
const runningHandler = new AsyncLocalStorage<EventLogSubscription>();

export function isInsideHandler(): boolean {
  return runningHandler.getStore() !== undefined;
}

/**
 * Walks the log's records in log order from its own cursor, handing those of its topics to one
 * handler at a time. The cursor moves past a record only once the handler succeeded.
 */
export class EventLogSubscription implements Subscription {
  readonly caughtUp: Promise<void>;
  private markCaughtUp: () => void = () => undefined;
  private readonly topics: ReadonlySet<string>;
  private cursor: number;
  private closed = false;
  private wakeUp: (() => void) | undefined;
  /** Only closing cuts a retry pause short: new records must not speed up the retries. */
  private cancelPause: (() => void) | undefined;
  private waiters: { index: number; resolve: () => void }[] = [];
  private readonly running: Promise<void>;

  constructor(
    private readonly records: readonly EventRecord[],
    private readonly options: SubscribeOptions,
    private readonly log: EmbeddedLogger,
    private readonly onClose: (subscription: EventLogSubscription) => void,
  ) {
    this.topics = new Set(options.topics);
    this.cursor = options.fromBeginning ? 0 : records.length;
    this.caughtUp = new Promise((resolve) => (this.markCaughtUp = resolve));
    this.running = this.run(records.length);
  }

  follows(topic: string): boolean {
    return !this.closed && this.topics.has(topic);
  }

  /** The log calls this after adding records. */
  notify(): void {
    this.wakeUp?.();
  }

  /** Resolves once the record at `index` in the log has been handled, or the subscription closed. */
  handled(index: number): Promise<void> {
    if (this.closed || this.cursor > index) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ index, resolve }));
  }

  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.wakeUp?.();
      this.cancelPause?.();
      this.settleWaiters();
      this.markCaughtUp();
      this.onClose(this);
    }
    // A handler closing its own subscription must not wait for itself to return.
    if (runningHandler.getStore() !== this) await this.running;
  }

  private async run(backlogEnd: number): Promise<void> {
    while (!this.closed) {
      if (this.cursor >= backlogEnd) this.markCaughtUp();
      const record = this.records[this.cursor];
      if (!record) {
        await new Promise<void>((resolve) => (this.wakeUp = resolve));
        this.wakeUp = undefined;
        continue;
      }
      if (this.topics.has(record.topic) && !(await this.handleUntilDone(record))) return;
      this.cursor += 1;
      this.settleWaiters();
    }
  }

  /**
   * Projectors dead-letter input they cannot use, so a throw means a passing fault (a store that is
   * briefly away): the same record is tried again after a growing pause. False once closed.
   */
  private async handleUntilDone(record: EventRecord): Promise<boolean> {
    let delayMs = RETRY_FIRST_DELAY_MS;
    for (;;) {
      try {
        await runningHandler.run(this, () => this.options.handle({ ...record }));
        return true;
      } catch (error) {
        this.log.error(
          { err: error, groupId: this.options.groupId, topic: record.topic, offset: record.offset },
          'event handler failed; retrying the record',
        );
      }
      await this.pause(delayMs);
      if (this.closed) return false;
      delayMs = Math.min(delayMs * 2, RETRY_MAX_DELAY_MS);
    }
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

  private settleWaiters(): void {
    const done = this.waiters.filter((waiter) => this.closed || waiter.index < this.cursor);
    this.waiters = this.waiters.filter((waiter) => !done.includes(waiter));
    for (const waiter of done) waiter.resolve();
  }
}
