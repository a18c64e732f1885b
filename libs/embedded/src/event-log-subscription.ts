import { ConsumerCore, type EventRecord, type SubscribeOptions, type Subscription } from '@rsd/ports';
import type { EmbeddedLogger } from './embedded-logger';

export { isInsideHandler } from '@rsd/ports';

/**
 * Walks the log's records in log order from its own cursor, handing those of its topics to the
 * consumer core one at a time. The cursor moves past a record only once the handler succeeded.
 * Positions are not stored, so there is nothing to commit, and `ephemeral` changes nothing.
 */
export class EventLogSubscription implements Subscription {
  private readonly core: ConsumerCore;
  private readonly topics: ReadonlySet<string>;
  private cursor: number;
  private wakeUp: (() => void) | undefined;
  private waiters: { index: number; resolve: () => void }[] = [];
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly records: readonly EventRecord[],
    options: SubscribeOptions,
    log: EmbeddedLogger,
    private readonly onClose: (subscription: EventLogSubscription) => void,
  ) {
    this.core = new ConsumerCore({
      groupId: options.groupId,
      handle: (record) => options.handle(record),
      commit: () => Promise.resolve(),
      stop: () => this.stop(),
      log,
    });
    this.topics = new Set(options.topics);
    this.cursor = options.fromBeginning ? 0 : records.length;
    this.running = this.run(records.length);
  }

  get caughtUp(): Promise<void> {
    return this.core.caughtUp;
  }

  freshAsOf(): Date | undefined {
    return new Date();
  }

  behindSince(): Date | undefined {
    return undefined;
  }

  follows(topic: string): boolean {
    return !this.core.closed && this.topics.has(topic);
  }

  /** The log calls this after adding records. */
  notify(): void {
    this.wakeUp?.();
  }

  /** Resolves once the record at `index` in the log has been handled, or the subscription closed. */
  handled(index: number): Promise<void> {
    if (this.core.closed || this.cursor > index) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ index, resolve }));
  }

  close(): Promise<void> {
    return this.core.close();
  }

  private stop(): Promise<void> {
    this.wakeUp?.();
    this.settleWaiters();
    this.onClose(this);
    return this.running;
  }

  private async run(backlogEnd: number): Promise<void> {
    while (!this.core.closed) {
      if (this.cursor >= backlogEnd) this.core.reportCaughtUp();
      const record = this.records[this.cursor];
      if (!record) {
        await new Promise<void>((resolve) => (this.wakeUp = resolve));
        this.wakeUp = undefined;
        continue;
      }
      if (this.topics.has(record.topic) && !(await this.core.deliver(record))) return;
      this.cursor += 1;
      this.settleWaiters();
    }
  }

  private settleWaiters(): void {
    const done = this.waiters.filter((waiter) => this.core.closed || waiter.index < this.cursor);
    this.waiters = this.waiters.filter((waiter) => !done.includes(waiter));
    for (const waiter of done) waiter.resolve();
  }
}
