import { closeSync, fdatasync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { createCheckpointer } from './checkpointer';
import { withSettings } from './worker-connection';

/**
 * The embedded database of one process: one connection, and one transaction per turn of the event
 * loop. Every change made during a turn (appends, authorization changes, view writes, positions)
 * joins that turn's transaction, which commits once when the turn ends (setImmediate): group
 * commit for every writer at once. Because there is one connection and one order of commits, a
 * consumer's position is never durable before the view writes it covers, and no writer in the
 * process can ever wait for another's lock.
 *
 * A commit is synced (the write-ahead log, fdatasync) when someone waits on it (`write`: an
 * append, an authorization), before they are told. The sync runs off the event loop, so reads go on
 * while the disk works, one at a time: the writes committed while one runs share the next. Readers
 * in the process see a commit before its sync; the event log's subscriptions read only what is
 * synced (sqlite-event-log.ts). A commit of `writeSoon` and `changeSoon`
 * changes alone (views, positions, the webhook queue: all rebuilt from the log) is not synced by
 * itself: the next synced commit, or the checkpoint, syncs it too, and a power cut can only take
 * the last few such commits, whole and in order (the log's frames are checksummed in a chain),
 * which the consumers then replay from their older positions. A killed process loses nothing:
 * what is written is in the operating system's cache.
 */
export interface EmbeddedDatabase {
  /** Prepared once per SQL text, reused for every call. */
  statement(sql: string): StatementSync;
  /**
   * Prepared once per SQL text on a connection of its own for reads of a whole table (an hourly pass
   * over every record), whose page cache is a few pages. On the shared connection such a read leaves
   * the table's pages in that connection's cache, up to its whole size (PAGE_CACHE_KIB) of memory for
   * pages no request needs, in place of the pages the reads do need. It reads what is committed, not
   * this turn's changes.
   */
  scanStatement(sql: string): StatementSync;
  /** Schema statements, run at once. */
  exec(sql: string): void;
  /**
   * Makes `change` part of this turn's transaction, atomically (it is undone alone if it throws),
   * and resolves with its result once the transaction is committed and synced.
   */
  write<T>(change: () => T): Promise<T>;
  /**
   * One statement in this turn's transaction without waiting for the commit, for what is rebuilt
   * from the log anyway (the views, the positions): it is durable with the next commit, in order with
   * everything else. A statement is atomic on its own, so it needs no savepoint.
   */
  writeSoon<T>(statement: () => T): T;
  /** Several statements in this turn's transaction, undone alone if they throw, without waiting for the commit. */
  changeSoon<T>(change: () => T): T;
  /**
   * Called after every commit: what was written is now visible to every reader in the process, though
   * a `write` in it may not be synced yet (its promise says when it is).
   */
  onCommit(listener: () => void): void;
  /** Releases this opener's use; the connection closes, after a last commit, when the last opener releases it. */
  close(): Promise<void>;
}

/** Each connection's page cache (connectRaw says why no larger). */
export const PAGE_CACHE_KIB = 16_384;
/** The scans' connection's page cache: a table read from end to end needs only its path down the tree. */
const SCAN_CACHE_KIB = 256;
/** Another process (a rebuild) may hold the write lock for a moment: wait rather than fail. */
export const BUSY_TIMEOUT_MS = 5_000;
/** Checkpoints run on their own thread (checkpointer.ts), at most this often. */
const CHECKPOINT_PAUSE_MS = 100;
/**
 * The committing connection checkpoints by itself only when the log has this many pages (40 MiB):
 * a fallback for a checkpoint thread that cannot keep up, not the way it is done. SQLite's default
 * (1,000) is what the connection goes back to if the thread fails.
 */
const FALLBACK_CHECKPOINT_PAGES = 10_000;
const DEFAULT_CHECKPOINT_PAGES = 1_000;

interface Waiter {
  done(): void;
  failed(error: unknown): void;
}

interface Shared {
  database: EmbeddedDatabase;
  openers: number;
  shutDown(): Promise<void>;
}

/** One connection per file in this process: two would take each other's locks within a turn. */
const open = new Map<string, Shared>();

export function openEmbeddedDatabase(file: string): EmbeddedDatabase {
  const path = resolve(file);
  let shared = open.get(path);
  if (!shared) {
    shared = connect(path, () => open.delete(path));
    open.set(path, shared);
  }
  shared.openers += 1;
  const opened = shared;
  let released = false;
  return {
    ...opened.database,
    close: () => {
      if (released) return Promise.resolve();
      released = true;
      opened.openers -= 1;
      return opened.openers === 0 ? opened.shutDown() : Promise.resolve();
    },
  };
}

/** Opens a connection with the project's settings: for the importer, which runs before the shared one. */
export function connectRaw(file: string): DatabaseSync {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  return withSettings(new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS }), [
    // WAL: readers never wait for the writer, and a commit is one sequential write and one sync.
    'PRAGMA journal_mode = WAL',
    // FULL: the write-ahead log is synced at every commit (the importer's, and the checkpoints'); the
    // shared connection syncs only the commits someone waits on (see EmbeddedDatabase).
    'PRAGMA synchronous = FULL',
    // 16 MiB of page cache: the hot pages of the views and the log stay in memory, and the rest is
    // in the operating system's cache a read away. No more: a commit whose inserts split a page
    // (SQLite moves a page through a spare number as it balances the tree) ends by walking the whole
    // cache's hash table, so every such commit cost time in proportion to the cache; at 64 MiB that
    // walk was most of a create's commit, and the pages it kept were most of an idle process's memory.
    `PRAGMA cache_size = -${PAGE_CACHE_KIB}`,
    // The savepoints of a turn's changes keep their undo records in memory rather than in temp files.
    'PRAGMA temp_store = MEMORY',
    // A checkpointed log is cut back to this size: otherwise the file keeps the size of the largest
    // transaction it ever held (gigabytes after importing a large data directory) for good.
    'PRAGMA journal_size_limit = 67108864',
  ]);
}

function connect(path: string, forget: () => void): Shared {
  const db = connectRaw(path);
  db.exec(`PRAGMA wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`);
  // NORMAL: SQLite syncs the log before a checkpoint, not at a commit; commitTurn syncs those that someone waits on.
  db.exec('PRAGMA synchronous = NORMAL');
  let walFd: number | undefined;
  const checkpointer = createCheckpointer({
    file: path,
    busyTimeoutMs: BUSY_TIMEOUT_MS,
    pauseMs: CHECKPOINT_PAUSE_MS,
    onFailure: () => {
      if (db.isOpen) db.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_CHECKPOINT_PAGES}`);
    },
  });
  const statement = preparedOn(() => db);
  let scans: DatabaseSync | undefined;
  const scanStatement = preparedOn(() => {
    if (!db.isOpen || closing) throw new Error('the embedded database is closed');
    scans ??= withSettings(new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS }), [
      'PRAGMA query_only = ON',
      `PRAGMA cache_size = -${SCAN_CACHE_KIB}`,
    ]);
    return scans;
  });
  const listeners: (() => void)[] = [];
  let waiting: Waiter[] = [];
  /** Committed, and waiting for a sync that has not started yet. */
  let unsynced: Waiter[] = [];
  let syncing: Promise<void> | undefined;
  let inTurn = false;
  let broken: Error | undefined;
  let savepoints = 0;
  let closing = false;

  function commitTurn(): void {
    if (!inTurn) return;
    inTurn = false;
    const settled = waiting;
    waiting = [];
    try {
      db.exec('COMMIT');
    } catch (error) {
      refuseWritesFromNow(error);
      if (db.isTransaction) db.exec('ROLLBACK');
      for (const waiter of settled) waiter.failed(broken);
      return;
    }
    if (settled.length > 0) {
      unsynced.push(...settled);
      syncSoon();
    }
    for (const listener of listeners) listener();
    checkpointer.nudge();
  }

  /**
   * Syncs the write-ahead log for the writers committed and not yet synced, on libuv's thread pool:
   * a sync takes milliseconds, and the event loop serves reads meanwhile. One at a time; the writers
   * that commit while one runs share the next. The log is one file written in order, so a sync
   * covers every commit before it.
   */
  function syncSoon(): void {
    if (syncing || unsynced.length === 0) return;
    const batch = unsynced;
    unsynced = [];
    // The log's file lives as long as this connection (the last one to close removes it).
    walFd ??= openSync(`${path}-wal`, 'r+');
    syncing = new Promise((synced) => {
      fdatasync(walFd as number, (error) => {
        syncing = undefined;
        if (error) {
          refuseWritesFromNow(error);
          for (const waiter of [...batch, ...unsynced]) waiter.failed(broken);
          unsynced = [];
        } else {
          for (const waiter of batch) waiter.done();
          syncSoon();
        }
        synced();
      });
    });
  }

  /**
   * What the disk refused is gone, and some of it (a view write) was already reported as done:
   * refuse every write from now on, so nothing can be stacked on top; a restart replays the log.
   */
  function refuseWritesFromNow(cause: unknown): void {
    broken ??= new Error('the embedded database could not commit and refuses writes until the process restarts', { cause });
  }

  /** Opens this turn's transaction if none is open: it commits when the turn ends. */
  function joinTurn(): void {
    if (!db.isOpen || closing) throw new Error('the embedded database is closed');
    if (broken) throw broken;
    if (inTurn) return;
    db.exec('BEGIN IMMEDIATE');
    inTurn = true;
    setImmediate(commitTurn);
  }

  /** A change of several statements, undone alone (a savepoint) if it throws. */
  function change<T>(work: () => T): T {
    joinTurn();
    const name = `change${savepoints++}`;
    db.exec(`SAVEPOINT ${name}`);
    try {
      const result = work();
      db.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      db.exec(`ROLLBACK TO ${name}`);
      db.exec(`RELEASE ${name}`);
      throw error;
    } finally {
      savepoints -= 1;
    }
  }

  const database: EmbeddedDatabase = {
    statement,
    scanStatement,
    exec: (sql) => db.exec(sql),
    write: (work) =>
      new Promise((done, failed) => {
        let result: ReturnType<typeof work>;
        try {
          result = change(work);
        } catch (error) {
          failed(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        waiting.push({ done: () => done(result), failed });
      }),
    writeSoon: (statement) => {
      joinTurn();
      return statement();
    },
    changeSoon: change,
    onCommit: (listener) => listeners.push(listener),
    close: () => Promise.resolve(),
  };
  return {
    database,
    openers: 0,
    shutDown: async () => {
      commitTurn();
      closing = true;
      while (syncing) await syncing;
      forget();
      // The thread's connection and the scans' first, so that this one closes last: the last connection
      // to close checkpoints what is left and removes the write-ahead log.
      if (scans?.isOpen) scans.close();
      await checkpointer.stop();
      if (walFd !== undefined) closeSync(walFd);
      if (db.isOpen) db.close();
    },
  };
}

/** Prepares each SQL text once on the connection `connection()` gives, and reuses it for every call. */
function preparedOn(connection: () => DatabaseSync): (sql: string) => StatementSync {
  const prepared = new Map<string, StatementSync>();
  return (sql) => {
    let statement = prepared.get(sql);
    if (!statement) {
      statement = connection().prepare(sql);
      prepared.set(sql, statement);
    }
    return statement;
  };
}

/** node:sqlite is synchronous: its errors become the promise's, like any other store's. */
export function settled<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/** Rows come back as records of SQL values; the schema says what each column holds. */
export function text(value: unknown): string {
  if (typeof value !== 'string') throw new Error(`expected a text column, got ${typeof value}`);
  return value;
}

/** A row's `record` column: the stored JSON of a record of type `T`; none for no row. */
export function recordOf<T>(row: Record<string, unknown> | undefined): T | undefined {
  return row ? (JSON.parse(text(row.record)) as T) : undefined;
}

export function integer(value: unknown): number {
  if (typeof value !== 'number') throw new Error(`expected an integer column, got ${typeof value}`);
  return value;
}
