import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';

/**
 * How much a commit waits for the disk. `durable`: the write-ahead log is synced at every commit,
 * so an acknowledged write survives a crash of the machine (the event log, the authorization store).
 * `deferred`: synced at checkpoints only, which survives a crash of the process but may lose the
 * last commits to a power cut: for the read views, which are rebuilt from the log and whose
 * position is committed durably only after them (see sqlite-event-log.ts).
 */
export type Durability = 'durable' | 'deferred';

/** Another process (a rebuild, the CLI) may hold the write lock for a moment: wait rather than fail. */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Opens the embedded database file, one connection per adapter. Every connection runs in WAL mode,
 * where readers never wait for the writer and one fsync per commit suffices. node:sqlite is
 * synchronous, so a transaction in this process never interleaves with another: the adapters
 * never await inside one.
 */
export function openDatabase(file: string, durability: Durability): DatabaseSync {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const db = new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS });
  try {
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${durability === 'durable' ? 'FULL' : 'NORMAL'}`);
    // Views and the log are read far more than written; a larger page cache keeps hot pages in memory (64 MiB).
    db.exec('PRAGMA cache_size = -65536');
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** Runs `work` in one transaction: all of it is written, or none of it. */
export function inTransaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/** Prepared statements by SQL text: prepared once per connection, reused for every call. */
export function statementCache(db: DatabaseSync): (sql: string) => StatementSync {
  const statements = new Map<string, StatementSync>();
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
}

/** Rows come back as records of SQL values; the schema says what each column holds. */
export function text(value: unknown): string {
  if (typeof value !== 'string') throw new Error(`expected a text column, got ${typeof value}`);
  return value;
}

export function integer(value: unknown): number {
  if (typeof value !== 'number') throw new Error(`expected an integer column, got ${typeof value}`);
  return value;
}

/** node:sqlite is synchronous: its errors become the promise's, like any other store's. */
export function settled<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
