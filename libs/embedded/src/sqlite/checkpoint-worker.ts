import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { parentPort } from 'node:worker_threads';
import type { StopRequest } from './worker-connection';
import { openWorkerConnection } from './worker-connection';

/** A passive checkpoint of one checkpointer's database, on the thread's connection to it (opened on its first request). */
export interface CheckpointRequest {
  checkpoint: number;
  file: string;
  busyTimeoutMs: number;
}

/** The checkpointer is done with its database: the thread closes its connection to it. */
export interface CloseRequest {
  close: number;
}

export type CheckpointWorkerRequest = CheckpointRequest | CloseRequest | StopRequest;

/** The answer to a request, by the checkpointer's id: a checkpoint's result or its failure, or the connection closed. */
export type CheckpointWorkerAnswer = { id: number } & ({ done: unknown } | { failed: string } | { closed: true });

interface Connection {
  db: DatabaseSync;
  checkpoint: StatementSync;
}

const port = parentPort;
if (port === null) throw new Error('checkpoint-worker runs as a worker thread');
const connections = new Map<number, Connection>();

function close(id: number): void {
  const connection = connections.get(id);
  connections.delete(id);
  if (connection?.db.isOpen) connection.db.close();
}

/**
 * The checkpoint thread (checkpointer.ts starts it): one for every database of the process, each
 * checkpointer's database on a connection of its own, its requests answered in the order they came.
 */
port.on('message', (request: CheckpointWorkerRequest) => {
  if (request === 'stop') {
    for (const id of connections.keys()) close(id);
    port.close();
    return;
  }
  if ('close' in request) {
    close(request.close);
    port.postMessage({ id: request.close, closed: true } satisfies CheckpointWorkerAnswer);
    return;
  }
  const id = request.checkpoint;
  try {
    let connection = connections.get(id);
    if (!connection) {
      // A checkpoint then syncs the log before it copies a page, and the file after.
      const db = openWorkerConnection(request.file, request.busyTimeoutMs, 'FULL');
      connection = { db, checkpoint: db.prepare('PRAGMA wal_checkpoint(PASSIVE)') };
      connections.set(id, connection);
    }
    port.postMessage({ id, done: connection.checkpoint.get() } satisfies CheckpointWorkerAnswer);
  } catch (error) {
    close(id);
    port.postMessage({ id, failed: error instanceof Error ? error.message : String(error) } satisfies CheckpointWorkerAnswer);
  }
});
