import type { StatementSync } from 'node:sqlite';
import { readAccessLines } from './access-batch-text';
import { serveDatabase } from './worker-connection';
import { writeAccessBatch, type BatchConnection } from './write-access-batch';

/** A batch as its lines (access-batch-text.ts). */
export interface AccessLogWorkerRequest {
  id: number;
  batch: string;
}

export interface AccessLogWorkerAnswer {
  id: number;
  failed?: string;
}

const prepared = new Map<string, StatementSync>();

/**
 * The access log's writer thread (access-log-writer.ts starts it): each batch is written in one
 * transaction and answered once committed, or with the error's message and nothing written.
 */
serveDatabase<AccessLogWorkerRequest, AccessLogWorkerAnswer>({
  program: 'access-log-worker',
  // As the store's connection: the log is synced before a checkpoint, not at a commit.
  synchronous: 'NORMAL',
  answer(db, { id, batch }) {
    const connection: BatchConnection = {
      prepare(sql) {
        let statement = prepared.get(sql);
        if (!statement) prepared.set(sql, (statement = db.prepare(sql)));
        return statement;
      },
    };
    try {
      db.exec('BEGIN IMMEDIATE');
      writeAccessBatch(connection, readAccessLines(batch), 'transaction');
      db.exec('COMMIT');
      return { id };
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  },
  failed: ({ id }, message) => ({ id, failed: message }),
});
