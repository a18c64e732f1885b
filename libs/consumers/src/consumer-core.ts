import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventRecord } from '@rsd/ports';

const RETRY_FIRST_DELAY_MS = 100;
const RETRY_MAX_DELAY_MS = 5_000;

/** The part of a logger the core uses; a pino `Logger` fits it as is. */
export interface ConsumerCoreLogger {
  error(details: object, message: string): void;
}

/** What a subscription's message source gives the core: the rest is the same for every event log. */
export interface ConsumerCoreOptions {
  groupId: string;
  handle(record: EventRecord): Promise<void>;
  /** Records of one partition that arrived together; default: `handle` on each in turn. */
  handleBatch?(records: readonly EventRecord[]): Promise<void>;
  /**
   * Moves the position past a record, called only once its handler resolved; durable at once or
   * soon after (both logs group their commits), so a crash may hand a few handled records over
   * again, which handlers absorb. Its errors go to the caller of `deliver`.
   */
  commit(record: EventRecord): Promise<void>;
  /**
   * Ends the source's delivery, once, when the subscription closes: any retry pause has been cut
   * short by then. Resolves once no handler runs any more.
   */
  stop(): Promise<void>;
  log: ConsumerCoreLogger;
}

/** Which consumer's handler the current async call chain runs in, if any. */
const runningHandler = new AsyncLocalStorage<ConsumerCore>();

export function isInsideHandler(): boolean {
  return runningHandler.getStore() !== undefined;
}

/**
 * What a subscription does whatever the log behind it: each record is handled until its handler
 * succeeds, its position is committed only after that, `caughtUp` resolves when the source reports
 * it (or on close), and close cuts every retry pause short, then waits for the source to stop. The
 * source delivers records in order, one at a time per partition (partitions may run side by side),
 * and knows where it is.
 */
export class ConsumerCore {
  readonly caughtUp: Promise<void>;
  private markCaughtUp: () => void = () => undefined;
  private isClosed = false;
  private stopping: Promise<void> | undefined;
  /**
   * Only closing cuts a retry pause short: new records must not speed up the retries. One per record
   * being retried: a source may deliver its partitions concurrently.
   */
  private readonly pauses = new Set<() => void>();

  constructor(private readonly options: ConsumerCoreOptions) {
    this.caughtUp = new Promise((resolve) => (this.markCaughtUp = resolve));
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Every record that was in the log at the start has been handled. */
  reportCaughtUp(): void {
    this.markCaughtUp();
  }

  /**
   * Handles the record until its handler succeeds, then commits it. False, with nothing committed,
   * once the subscription closed. `beforeRetry` runs before each new attempt; what it throws ends
   * the delivery (Kafka's heartbeat reports a rebalance that way).
   */
  async deliver(record: EventRecord, beforeRetry?: () => Promise<void>): Promise<boolean> {
    return this.deliverBatch([record], beforeRetry);
  }

  /**
   * The records of one partition, in order, as one unit: handled together until the handler
   * succeeds (a failure retries them all, which handlers absorb), then the last one is committed.
   */
  async deliverBatch(records: readonly EventRecord[], beforeRetry?: () => Promise<void>): Promise<boolean> {
    const last = records.at(-1);
    if (!last) return true;
    if (!(await this.handleUntilDone(records, beforeRetry))) return false;
    await this.options.commit(last);
    return true;
  }

  close(): Promise<void> {
    if (!this.stopping) {
      this.isClosed = true;
      for (const cancel of this.pauses) cancel();
      this.markCaughtUp();
      this.stopping = this.options.stop();
    }
    // A handler closing its own subscription must not wait for itself to return.
    if (runningHandler.getStore() !== this) return this.stopping;
    this.stopping.catch((error: unknown) =>
      this.options.log.error({ err: error, groupId: this.options.groupId }, 'subscription did not stop cleanly'),
    );
    return Promise.resolve();
  }

  /**
   * Projectors dead-letter input they cannot use, so a throw means a passing fault (a store that is
   * briefly away): the same record is tried again after a growing pause. False once closed.
   */
  private async handleUntilDone(records: readonly EventRecord[], beforeRetry?: () => Promise<void>): Promise<boolean> {
    let delayMs = RETRY_FIRST_DELAY_MS;
    const [first] = records;
    while (!this.isClosed) {
      try {
        await runningHandler.run(this, () => this.handle(records));
        return true;
      } catch (error) {
        this.options.log.error(
          {
            err: error,
            groupId: this.options.groupId,
            topic: first?.topic,
            partition: first?.partition,
            offset: first?.offset,
            ...(records.length > 1 ? { records: records.length } : {}),
          },
          records.length > 1 ? 'event handler failed; retrying the records' : 'event handler failed; retrying the record',
        );
      }
      await this.pause(delayMs);
      if (this.isClosed) break;
      await beforeRetry?.();
      delayMs = Math.min(delayMs * 2, RETRY_MAX_DELAY_MS);
    }
    return false;
  }

  /** Each attempt gets copies: a handler that changed a record must not change what the next attempt sees. */
  private async handle(records: readonly EventRecord[]): Promise<void> {
    const copies = records.map((record) => ({ ...record }));
    if (this.options.handleBatch) return this.options.handleBatch(copies);
    for (const copy of copies) await this.options.handle(copy);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.pauses.delete(end);
        resolve();
      };
      const timer = setTimeout(end, ms);
      this.pauses.add(end);
    });
  }
}
