import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import type { AccessBatch } from './access-log-batch';
import { writeAccessBatch, type BatchConnection } from './write-access-batch';

/**
 * The access log's writer thread's program (access-log-writer.ts starts it): a connection of its
 * own; each batch is written in one transaction and answered once committed, or with the error's
 * message and nothing written; 'stop' closes the connection.
 */
export interface AccessLogWorkerData {
  file: string;
  busyTimeoutMs: number;
}

/** A batch as JSON (AccessBatch), or the end. */
export type AccessLogWorkerRequest = { id: number; batch: string } | 'stop';

export interface AccessLogWorkerAnswer {
  id: number;
  failed?: string;
}

const port = parentPort;
if (port === null) throw new Error('access-log-worker runs as a worker thread, started by access-log-writer.ts');
const { file, busyTimeoutMs } = workerData as AccessLogWorkerData;
const db = new DatabaseSync(file, { timeout: busyTimeoutMs });
// As the store's connection: the log is synced before a checkpoint, not at a commit.
db.exec('PRAGMA synchronous = NORMAL');
const prepared = new Map<string, StatementSync>();
const connection: BatchConnection = {
  prepare(sql) {
    let statement = prepared.get(sql);
    if (!statement) prepared.set(sql, (statement = db.prepare(sql)));
    return statement;
  },
};

port.on('message', (message: AccessLogWorkerRequest) => {
  if (message === 'stop') {
    db.close();
    port.close();
    return;
  }
  try {
    db.exec('BEGIN IMMEDIATE');
    writeAccessBatch(connection, JSON.parse(message.batch) as AccessBatch);
    db.exec('COMMIT');
    port.postMessage({ id: message.id } satisfies AccessLogWorkerAnswer);
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    port.postMessage({ id: message.id, failed: error instanceof Error ? error.message : String(error) } satisfies AccessLogWorkerAnswer);
  }
});
