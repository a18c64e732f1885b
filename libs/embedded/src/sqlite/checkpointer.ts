import { Worker } from 'node:worker_threads';
import type { CheckpointWorkerAnswer, CheckpointWorkerRequest } from './checkpoint-worker';
import type { DatabaseWorkerData, StopRequest } from './worker-connection';
import { compiledWorker } from './compiled-worker';

/**
 * Copies the write-ahead log back into the database file on a thread of its own. A checkpoint
 * writes every page the log holds to its place in the file and syncs the file: at 100k
 * authorizations those are random writes, and done by the committing connection (SQLite's
 * automatic checkpoint) they would hold the event loop for as long as the disk takes. A second
 * connection can checkpoint while the first goes on writing (WAL: a PASSIVE checkpoint takes no
 * lock a writer needs), so after each commit the owner nudges this thread, which checkpoints once
 * and reports back; nudges while it works fold into one. An idle database costs nothing: the
 * thread starts on the first nudge and sleeps on its message port.
 */
export interface Checkpointer {
  /** Something was committed: checkpoint soon. */
  nudge(): void;
  /** Stops the thread once a checkpoint under way has finished, and closes its connection. */
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  file: string;
  busyTimeoutMs: number;
  /** The least time between the end of one checkpoint and the start of the next: each syncs the file. */
  pauseMs: number;
  /** Told when the thread failed; it checkpoints no more. */
  onFailure(message: string): void;
}

export function createCheckpointer(options: CheckpointerOptions): Checkpointer {
  let worker: Worker | undefined;
  /** A checkpoint is under way or waiting out its pause: nudges until then fold into `nudgedMeanwhile`. */
  let busy = false;
  let nudgedMeanwhile = false;
  let pause: NodeJS.Timeout | undefined;
  let over = false;

  function start(): Worker {
    // The thread's program is checkpoint-worker.ts.
    const started = new Worker(compiledWorker('checkpoint-worker'), {
      workerData: { file: options.file, busyTimeoutMs: options.busyTimeoutMs } satisfies DatabaseWorkerData,
    });
    // The process may exit while the thread sleeps: it holds nothing that a restart needs.
    started.unref();
    started.on('message', (result: CheckpointWorkerAnswer) => {
      if (result.failed !== undefined) return fail(result.failed);
      if (!nudgedMeanwhile) {
        busy = false;
        return;
      }
      nudgedMeanwhile = false;
      pause = setTimeout(checkpoint, options.pauseMs).unref();
    });
    started.on('error', (error: Error) => fail(error.message));
    return started;
  }

  function checkpoint(): void {
    pause = undefined;
    if (over) return;
    busy = true;
    worker ??= start();
    worker.postMessage('checkpoint' satisfies CheckpointWorkerRequest);
  }

  /** Once failed, for good: the owner goes back to checkpointing by itself. */
  function fail(message: string): void {
    if (over) return;
    void stop();
    options.onFailure(message);
  }

  async function stop(): Promise<void> {
    over = true;
    clearTimeout(pause);
    const stopping = worker;
    worker = undefined;
    if (!stopping) return;
    const exited = new Promise<void>((done) => stopping.once('exit', () => done()));
    // Held until it has exited: otherwise a process with nothing else to do would end while waiting.
    stopping.ref();
    stopping.postMessage('stop' satisfies StopRequest);
    await exited;
  }

  return {
    nudge() {
      if (busy) nudgedMeanwhile = true;
      else checkpoint();
    },
    stop,
  };
}
