import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

/** What a database thread is started with (compiled-worker.ts): its database file and how long it waits for a lock. */
export interface DatabaseWorkerData {
  file: string;
  busyTimeoutMs: number;
}

/** What ends a database thread: its connection closed, then its port. */
export type StopRequest = 'stop';

export interface DatabaseWorker<Request, Answer> {
  /** Its name, for the error when it is not run as a thread. */
  program: string;
  synchronous: 'NORMAL' | 'FULL';
  /** The answer to one request, on the thread's own connection; throws when it failed. */
  answer(db: DatabaseSync, request: Request): Answer;
  /** The answer when `answer` threw. */
  failed(request: Request, message: string): Answer;
}

/**
 * A database thread's program: a connection of its own, one answer per request in the order they
 * came, and 'stop' closes the connection and the port.
 */
export function serveDatabase<Request, Answer>(worker: DatabaseWorker<Request, Answer>): void {
  const port = parentPort;
  if (port === null) throw new Error(`${worker.program} runs as a worker thread`);
  const { file, busyTimeoutMs } = workerData as DatabaseWorkerData;
  const db = openWorkerConnection(file, busyTimeoutMs, worker.synchronous);
  port.on('message', (request: Request | StopRequest) => {
    if (request === 'stop') {
      db.close();
      port.close();
      return;
    }
    try {
      port.postMessage(worker.answer(db, request));
    } catch (error) {
      port.postMessage(worker.failed(request, error instanceof Error ? error.message : String(error)));
    }
  });
}

/** A database thread's own connection to `file`, with the settings every such thread shares. */
export function openWorkerConnection(file: string, busyTimeoutMs: number, synchronous: 'NORMAL' | 'FULL'): DatabaseSync {
  return withSettings(new DatabaseSync(file, { timeout: busyTimeoutMs }), [
    `PRAGMA synchronous = ${synchronous}`,
    // A statement that changes many rows (the access log's inserts of 32 records, each in its own
    // Client ID's part of the key) keeps the pages it changed for its undo; past 64 KiB SQLite writes
    // them to a temporary file, a write per page. In memory, as the shared connection keeps them.
    'PRAGMA temp_store = MEMORY',
    // The access log's writer commits a batch every few hundred reads, and SQLite's automatic
    // checkpoint (at 1,000 pages) copied the same hot pages back into the file every few commits:
    // about a sixth of the thread's time under a portfolio page's load. At 10,000 pages (40 MiB) a page
    // written many times between checkpoints is copied once; a checkpointed log is cut back to 64 MiB,
    // as the shared connection's is.
    'PRAGMA wal_autocheckpoint = 10000',
    'PRAGMA journal_size_limit = 67108864',
  ]);
}

/** `db` once each setting is applied; closed, and the error thrown, when one fails (no connection left open). */
export function withSettings(db: DatabaseSync, settings: readonly string[]): DatabaseSync {
  try {
    for (const setting of settings) db.exec(setting);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
