import type { EventRecord, SubscribeOptions, Subscription } from '@rsd/ports';
import { ConsumerCore } from '@rsd/consumers';
import type { EmbeddedLogger } from '../embedded-logger';

export { isInsideHandler } from '@rsd/consumers';

/** A row of the log as the subscription reads it. */
export interface LogRow {
  seq: number;
  topic: string;
  key: string;
  value: string;
}

/** Records of a subscription's topics, and how far the log was read for them. */
export interface LogPage {
  rows: LogRow[];
  /**
   * Every record up to this sequence number was read: the last row's when the page is full, else the
   * end of the log as it was read. The records of other topics in between are passed by.
   */
  through: number;
}

/** What a subscription needs of the log's database. */
export interface LogReader {
  /** The sequence number of the last record, 0 for an empty log. */
  end(): number;
  /**
   * Up to `limit` records of `topics` after `after`, in log order. The log picks them out itself: a
   * subscription to the authorizations reads none of the scores between them (200,000 after a bulk
   * ingest, each a row handed over and dropped).
   */
  page(after: number, limit: number, topics: readonly string[]): LogPage;
  /** The record as it is written. */
  recordOf(row: LogRow): EventRecord;
  /**
   * The record as a consumer reads it, parsed (and opened: decision 56) once for every subscription
   * of the log; run in the handler, so a failure is retried as the handler's would be.
   */
  opened(record: EventRecord): Promise<EventRecord>;
  /** The group's committed position, if it has one. */
  position(groupId: string): number | undefined;
  /** Joins the next commit, after every write the group's handlers made before it. */
  savePosition(groupId: string, seq: number): void;
}

/** Enough records per read to amortize the query, few enough to keep a page small in memory. */
const PAGE_SIZE = 512;
/**
 * The longest a subscription handles records in one go during a catch-up before it lets the event
 * loop serve others: a whole page of score events takes many times longer to project, and every
 * create or read waiting meanwhile would wait that long, at each of its steps.
 */
const SLICE_MS = 2;

/**
 * Reads the log from its own position in pages, handing the records of its topics to the consumer
 * core one at a time. The position moves past a record only once its handler succeeded, and is
 * written at most `positionFlushMs` later (and at close), in a commit at or after the one of the
 * handler's writes: after a crash the group replays at most those records, which the projections
 * absorb (their writes are idempotent).
 */
export class SqliteLogSubscription implements Subscription {
  private readonly core: ConsumerCore;
  private readonly topics: readonly string[];
  /** The sequence number of the last record read past (handled, or of another topic). */
  private cursor: number;
  private committed: number | undefined;
  private saved: number | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private wakeUp: (() => void) | undefined;
  private waiters: { seq: number; resolve: () => void }[] = [];
  private readonly running: Promise<void>;

  constructor(
    private readonly reader: LogReader,
    private readonly options: SubscribeOptions,
    private readonly settings: { log: EmbeddedLogger; positionFlushMs: number },
    private readonly onClose: (subscription: SqliteLogSubscription) => void,
  ) {
    this.core = new ConsumerCore({
      groupId: options.groupId,
      handle: async (record) => options.handle(await reader.opened(record)),
      commit: (record) => this.commit(record),
      stop: () => this.stop(),
      log: settings.log,
    });
    this.topics = [...new Set(options.topics)];
    const end = reader.end();
    // Like a Kafka group: a committed position wins; `fromBeginning` only says where a new group starts.
    const stored = options.ephemeral ? undefined : reader.position(options.groupId);
    this.cursor = stored ?? (options.fromBeginning ? 0 : end);
    this.saved = stored;
    this.running = this.run(end);
  }

  get caughtUp(): Promise<void> {
    return this.core.caughtUp;
  }

  /** An in-process log cannot be out of reach: the subscription is as fresh as the present. */
  freshAsOf(): Date | undefined {
    return new Date();
  }

  behindSince(): Date | undefined {
    return undefined;
  }

  /** Whether `append` waits for this subscription to handle records of `topic` (read-your-writes). */
  awaits(topic: string): boolean {
    return !this.core.closed && this.topics.includes(topic) && (this.options.awaitedOn?.includes(topic) ?? true);
  }

  /** The log calls this after a commit added records. */
  notify(): void {
    this.wakeUp?.();
  }

  /** Resolves once the record `seq` has been read past, or the subscription closed. */
  handled(seq: number): Promise<void> {
    if (this.core.closed || this.cursor >= seq) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  close(): Promise<void> {
    return this.core.close();
  }

  private commit(record: EventRecord): Promise<void> {
    this.passedOver(Number(record.offset));
    return Promise.resolve();
  }

  /**
   * Every record up to `seq` is handled, or of another topic: the position moves there, written at most
   * `positionFlushMs` later. Past another topic's records too: otherwise a group whose topics have had
   * nothing since its last record (the authorizations' consumers under a log of scores) kept that
   * record's position, and every start read all of the log after it again, every page of it kept in
   * the page cache (at 20k authorizations, 20,000 score events and some 12 MB of memory).
   */
  private passedOver(seq: number): void {
    if (this.options.ephemeral || seq <= (this.committed ?? this.saved ?? 0)) return;
    this.committed = seq;
    this.flushTimer ??= setTimeout(() => this.flushPosition(), this.settings.positionFlushMs);
  }

  private flushPosition(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.committed === undefined || this.committed === this.saved) return;
    try {
      this.reader.savePosition(this.options.groupId, this.committed);
      this.saved = this.committed;
    } catch (error) {
      // Not fatal: the position is kept in memory and written with the next commit or at close.
      this.settings.log.warn({ err: error, groupId: this.options.groupId }, 'could not save the subscription position');
    }
  }

  private async stop(): Promise<void> {
    this.wakeUp?.();
    this.settleWaiters();
    this.onClose(this);
    await this.running;
    this.flushPosition();
  }

  private async run(backlogEnd: number): Promise<void> {
    // The page being handled and the next of its rows: a slice that ends mid-page leaves the rest for
    // the next slice rather than reading them again. A slow handler (a score's projection) gets
    // through a few dozen records a slice, and reading the page afresh each time read every record
    // of a catch-up many times over. The log is append-only, so rows read are never out of date.
    let rows: LogRow[] = [];
    let through = this.cursor;
    let next = 0;
    while (!this.core.closed) {
      if (next >= rows.length) {
        ({ rows, through } = this.reader.page(this.cursor, PAGE_SIZE, this.topics));
        next = 0;
      }
      if (rows.length === 0) {
        this.readPast(through);
        if (this.cursor >= backlogEnd) this.core.reportCaughtUp();
        await new Promise<void>((resolve) => (this.wakeUp = resolve));
        this.wakeUp = undefined;
        continue;
      }
      const sliceEnds = performance.now() + SLICE_MS;
      let sliceOver = false;
      while (next < rows.length) {
        const row = rows[next] as LogRow;
        if (!(await this.core.deliver(this.reader.recordOf(row)))) return;
        next += 1;
        this.readPast(row.seq);
        if (performance.now() >= sliceEnds) {
          sliceOver = true;
          break;
        }
      }
      if (next >= rows.length) this.readPast(through);
      if (this.cursor >= backlogEnd) this.core.reportCaughtUp();
      // A full page or a slice used up means a backlog. Handlers on this database resolve without
      // waiting on I/O, so without this pause a catch-up would run as one task: one transaction for
      // the whole backlog (the turn's commit waits for the turn to end), nothing durable until its
      // end, and no request served meanwhile. Between slices the turn's writes commit and other work
      // gets its turn; the next slice goes on from where this one stopped.
      if (sliceOver || rows.length === PAGE_SIZE) {
        // The position so far joins the turn's commit, which the pause lets through first.
        if (this.flushTimer) this.flushPosition();
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }

  /** Everything up to `seq` is read past: its records handled, or of other topics. */
  private readPast(seq: number): void {
    if (seq <= this.cursor) return;
    this.cursor = seq;
    this.passedOver(seq);
    this.settleWaiters();
  }

  private settleWaiters(): void {
    if (this.waiters.length === 0) return;
    const done = this.waiters.filter((waiter) => this.core.closed || waiter.seq <= this.cursor);
    if (done.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => !done.includes(waiter));
    for (const waiter of done) waiter.resolve();
  }
}
