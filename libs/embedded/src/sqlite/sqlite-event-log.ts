import { type EventLog, type EventRecord, type OutgoingRecord } from '@rsd/ports';
import { parseRecord, type OpenedRecord } from '@rsd/consumers';
import { LRUCache } from 'lru-cache';
import { silentLogger, type EmbeddedLogger } from '../embedded-logger';
import { deepFreeze } from '../memory-view-store';
import { integer, openEmbeddedDatabase } from './database';
import { isInsideHandler, SqliteLogSubscription, type LogReader, type LogRow } from './sqlite-log-subscription';

export interface SqliteEventLogOptions {
  file: string;
  log?: EmbeddedLogger;
  /** How long `append` waits for live subscribers before answering anyway; the records are durable by then. */
  deliveryTimeoutMs?: number;
  /** How long a committed position may stay in memory only; a crash replays at most this much, which the views absorb. */
  positionFlushMs?: number;
  /**
   * How a record is read (decision 56: its sealed fields opened, `openRecord`), once for every
   * subscription; by default parsed as it is written (`parseRecord`).
   */
  open?: (record: EventRecord) => Promise<OpenedRecord>;
}

const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;
const DEFAULT_POSITION_FLUSH_MS = 250;
/**
 * Records kept parsed for the subscriptions that read them next: the live ones read the same new
 * records within a page or two of each other, so each parse (JSON, then the event schema) is done
 * once.
 */
const PARSED_RECORDS = 4_096;

/**
 * The embedded event log: one table in the embedded database, a row per record in log order. Every
 * topic has a single partition (0) and a record's offset is its sequence number in the whole log,
 * so offsets grow within a topic, with gaps where other topics' records sit.
 *
 * Appends join the database's transaction of the current turn of the event loop (group commit: one
 * sync for every request in flight; see database.ts). Subscriptions read from their own position, so
 * a start reads only what was appended since its group's last committed position instead of
 * replaying the log; positions of non-ephemeral groups are kept in the same database, written in
 * order after the view writes they cover.
 */
export function openSqliteEventLog(options: SqliteEventLogOptions): EventLog {
  const log = options.log ?? silentLogger;
  const deliveryTimeoutMs = options.deliveryTimeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  const positionFlushMs = options.positionFlushMs ?? DEFAULT_POSITION_FLUSH_MS;
  const db = openEmbeddedDatabase(options.file);
  createLogTables(db);
  const statement = (sql: string) => db.statement(sql);
  const subscriptions = new Set<SqliteLogSubscription>();
  // Subscriptions read only durable records: the turn's transaction may still hold newer ones, and a
  // commit may still wait for its sync. A projection, a webhook never acts on what a power cut could take.
  let durableEnd = integer(statement('SELECT COALESCE(MAX(seq), 0) AS seq FROM events').get()?.seq);
  let closed = false;
  const open = options.open ?? ((record: EventRecord): Promise<OpenedRecord> => Promise.resolve({ parsed: parseRecord(record) }));
  // By sequence number, which names one record for good: the log is append-only. The promise is kept
  // while it runs, so subscriptions reading the same record at once open it once.
  const parsed = new LRUCache<number, Promise<OpenedRecord>>({ max: PARSED_RECORDS });

  const reader: LogReader = {
    end: () => durableEnd,
    page: (after, limit, topics) => {
      // The end as it is now: what the page did not reach is read by the next one.
      const end = durableEnd;
      // The primary key's range, each row's topic checked where it lies: no row of another topic is handed over.
      const rows = statement(
        `SELECT seq, topic, key, value FROM events WHERE seq > ? AND seq <= ? AND topic IN (${topics.map(() => '?').join(', ')})
          ORDER BY seq LIMIT ?`,
      ).all(after, end, ...topics, limit) as unknown as LogRow[];
      return { rows, through: rows.length === limit ? (rows.at(-1) as LogRow).seq : end };
    },
    recordOf: (row: LogRow) => ({ topic: row.topic, partition: 0, offset: String(row.seq), key: row.key, value: row.value }),
    opened: async (record) => {
      const seq = Number(record.offset);
      let answer = parsed.get(seq);
      if (!answer) {
        // Frozen, since every subscription's handler gets the same event.
        answer = open(record).then((result) => {
          // An erasure seen: no record opened before it is handed out again from memory.
          if (result.forgot) parsed.clear();
          return deepFreeze(result);
        });
        parsed.set(seq, answer);
        // A failure (the key store away) is not kept: the handler's next attempt opens it again.
        answer.catch(() => parsed.delete(seq));
      }
      const { parsed: event, opened } = await answer;
      return { ...record, parsed: event, ...(opened === undefined ? {} : { opened }) };
    },
    position: (groupId) => {
      const row = statement('SELECT seq FROM positions WHERE group_id = ?').get(groupId);
      return row ? integer(row.seq) : undefined;
    },
    savePosition: (groupId, seq) => {
      db.writeSoon(() =>
        statement('INSERT INTO positions (group_id, seq) VALUES (?, ?) ON CONFLICT (group_id) DO UPDATE SET seq = excluded.seq').run(
          groupId,
          seq,
        ),
      );
    },
  };

  /**
   * Joins this turn's transaction (group commit: one sync for every append in flight); resolves once
   * it is durable, and then lets the subscriptions read up to it. Syncs complete in commit order and
   * every record of an earlier commit has a smaller number, so everything up to `last` is durable.
   */
  async function durablyAppended(topic: string, records: readonly OutgoingRecord[]): Promise<number> {
    const last = await db.write(() => {
      let appended = 0;
      for (const { key, value } of records) {
        appended = Number(statement('INSERT INTO events (topic, key, value) VALUES (?, ?, ?)').run(topic, key, value).lastInsertRowid);
      }
      return appended;
    });
    if (last > durableEnd) {
      durableEnd = last;
      for (const subscription of subscriptions) subscription.notify();
    }
    return last;
  }

  /** Read-your-writes in one process: the caller answers only after the live projections saw its records. */
  async function awaitDelivery(topic: string, lastSeq: number): Promise<void> {
    const delivered = [...subscriptions].filter((s) => s.awaits(topic)).map((s) => s.handled(lastSeq));
    if (delivered.length === 0) return;
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
    async append(topic, records) {
      if (closed) throw new Error('the event log is closed');
      if (records.length === 0) return;
      const lastSeq = await durablyAppended(topic, records);
      // Inside a handler (a projector dead-lettering, say), waiting for delivery could wait on
      // the very subscription that is running it, directly or through another one: durable is enough.
      if (!isInsideHandler()) await awaitDelivery(topic, lastSeq);
    },

    subscribe(subscribeOptions) {
      if (closed) return Promise.reject(new Error('the event log is closed'));
      const subscription = new SqliteLogSubscription(reader, subscribeOptions, { log, positionFlushMs }, (s) => subscriptions.delete(s));
      subscriptions.add(subscription);
      return Promise.resolve(subscription);
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((subscription) => subscription.close()));
      await db.close();
    },
  };
}

/** The log's tables: records in log order, and the committed position of each consumer group. */
export function createLogTables(db: { exec(sql: string): void }): void {
  db.exec(`CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY, topic TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL
  )`);
  db.exec('CREATE TABLE IF NOT EXISTS positions (group_id TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID');
}
