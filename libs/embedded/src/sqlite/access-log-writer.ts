import { Worker } from 'node:worker_threads';
import type { AccessLogWorkerAnswer, AccessLogWorkerRequest } from './access-log-worker';
import type { DatabaseWorkerData, StopRequest } from './worker-connection';
import { compiledWorker } from './compiled-worker';

/**
 * The embedded access log's one writer, on a thread of its own. The read API hands it a batch of
 * records every few hundred reads; inserting them and adding them to the usage counts on the event
 * loop would hold it for the whole batch, time every read would wait for. Here the loop only
 * writes the batch as lines of text (access-batch-text.ts); the thread inserts it on a connection
 * of its own, in one transaction, and answers once it is committed, so the store's readers see it
 * as soon as the publish resolves. Its commits are not synced by themselves, as the store's were
 * not: a killed process loses nothing, and a power cut only the last few.
 *
 * The store keeps its own connection for reads and the prune (a second writer, once a day: WAL lets
 * one write at a time, and either waits for the other's short transaction).
 */
export interface AccessLogWriter {
  /** The batch as its lines (access-batch-text.ts). Resolves once it is committed; rejects, with nothing written, when it could not be. */
  write(batch: string): Promise<void>;
  /** Finishes the batches handed over, then closes the thread's connection. */
  stop(): Promise<void>;
}

export function startAccessLogWriter(options: { file: string; busyTimeoutMs: number }): AccessLogWriter {
  // The thread's program is access-log-worker.ts.
  const worker = new Worker(compiledWorker('access-log-worker'), {
    workerData: { file: options.file, busyTimeoutMs: options.busyTimeoutMs } satisfies DatabaseWorkerData,
  });
  // Idle between batches: the process may exit while it sleeps (stop waits for what was handed over).
  worker.unref();
  const pending = new Map<number, { done(): void; failed(error: Error): void }>();
  let nextId = 0;
  let broken: Error | undefined;
  let stopped: Promise<void> | undefined;

  const failAll = (error: Error) => {
    broken ??= error;
    for (const waiter of pending.values()) waiter.failed(error);
    pending.clear();
  };
  worker.on('message', ({ id, failed }: AccessLogWorkerAnswer) => {
    const waiter = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    if (failed === undefined) waiter?.done();
    else waiter?.failed(new Error(`the access log could not write a batch: ${failed}`));
  });
  worker.on('error', (error: Error) => failAll(new Error('the access log writer thread failed', { cause: error })));
  worker.on('exit', () => failAll(new Error('the access log writer thread has stopped')));

  return {
    write(batch) {
      if (stopped) return Promise.reject(new Error('the access log is closed'));
      if (broken) return Promise.reject(broken);
      const id = nextId++;
      const message: AccessLogWorkerRequest = { id, batch };
      return new Promise<void>((done, failed) => {
        pending.set(id, { done, failed });
        // Held while a batch is in its hands: a process that is stopping waits for it.
        worker.ref();
        worker.postMessage(message);
      });
    },
    stop() {
      stopped ??= (async () => {
        if (!broken) {
          const exited = new Promise<void>((done) => worker.once('exit', () => done()));
          worker.ref();
          // Messages are handled in order: every batch handed over before this is written first.
          worker.postMessage('stop' satisfies StopRequest);
          await exited;
        }
      })();
      return stopped;
    },
  };
}
