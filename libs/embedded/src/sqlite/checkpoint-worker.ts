import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * The checkpoint thread's program (checkpointer.ts starts it): it opens its own connection,
 * checkpoints on every message and answers with the result or the error's message; 'stop' closes the
 * connection.
 */
export interface CheckpointWorkerData {
  file: string;
  busyTimeoutMs: number;
}

export type CheckpointWorkerRequest = 'checkpoint' | 'stop';

export interface CheckpointWorkerAnswer {
  done?: unknown;
  failed?: string;
}

const port = parentPort;
if (port === null) throw new Error('checkpoint-worker runs as a worker thread, started by checkpointer.ts');
const { file, busyTimeoutMs } = workerData as CheckpointWorkerData;
const db = new DatabaseSync(file, { timeout: busyTimeoutMs });
// A checkpoint then syncs the log before it copies a page, and the file after.
db.exec('PRAGMA synchronous = FULL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

port.on('message', (message: CheckpointWorkerRequest) => {
  if (message === 'stop') {
    db.close();
    port.close();
    return;
  }
  try {
    port.postMessage({ done: checkpoint.get() } satisfies CheckpointWorkerAnswer);
  } catch (error) {
    port.postMessage({ failed: error instanceof Error ? error.message : String(error) } satisfies CheckpointWorkerAnswer);
  }
});
