import { Worker } from 'node:worker_threads';

/**
 * Copies the write-ahead log back into the database file on a thread of its own. A checkpoint
 * writes every page the log holds to its place in the file and syncs the file: at 100k
 * authorizations those are random writes, and done by the committing connection (SQLite's
 * automatic checkpoint) they were 29 % of the event loop during a batch ingest. A second
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

/**
 * The thread's program, as source: the tests run the TypeScript sources, where no compiled file
 * sits beside this one to start a worker from. It opens its own connection, checkpoints on every
 * message and answers with the result or the error's message; 'stop' closes the connection.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.file, { timeout: workerData.busyTimeoutMs });
// A checkpoint then syncs the log before it copies a page, and the file after.
db.exec('PRAGMA synchronous = FULL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
parentPort.on('message', (message) => {
  if (message === 'stop') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    parentPort.postMessage({ done: checkpoint.get() });
  } catch (error) {
    parentPort.postMessage({ failed: String(error && error.message) });
  }
});
`;

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
    const started = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { file: options.file, busyTimeoutMs: options.busyTimeoutMs },
    });
    // The process may exit while the thread sleeps: it holds nothing that a restart needs.
    started.unref();
    started.on('message', (result: { done?: unknown; failed?: string }) => {
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
    worker.postMessage('checkpoint');
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
    stopping.postMessage('stop');
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
