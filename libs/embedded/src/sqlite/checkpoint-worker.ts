import type { StatementSync } from 'node:sqlite';
import { serveDatabase } from './worker-connection';

export type CheckpointWorkerRequest = 'checkpoint';

export interface CheckpointWorkerAnswer {
  done?: unknown;
  failed?: string;
}

let checkpoint: StatementSync | undefined;

/** The checkpoint thread (checkpointer.ts starts it): a passive checkpoint on every request, answered with its result. */
serveDatabase<CheckpointWorkerRequest, CheckpointWorkerAnswer>({
  program: 'checkpoint-worker',
  // A checkpoint then syncs the log before it copies a page, and the file after.
  synchronous: 'FULL',
  answer: (db) => ({ done: (checkpoint ??= db.prepare('PRAGMA wal_checkpoint(PASSIVE)')).get() }),
  failed: (_request, message) => ({ failed: message }),
});
