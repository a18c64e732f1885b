import { Worker } from 'node:worker_threads';
import type { CheckpointWorkerAnswer, CheckpointWorkerRequest } from './checkpoint-worker';
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
 *
 * One thread checkpoints every database of the process (the log and views, the access log, the
 * subject keys), each on a connection of its own: a thread is an isolate of its own, some 8 MB of
 * memory, and checkpoints are the disk's work, which a second thread would not make faster.
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

/** The process's checkpoint thread: started by the first nudge of any checkpointer, stopped by the last one's stop. */
interface SharedThread {
  worker: Worker;
  /** Each checkpointer that has used it and not stopped, by id: how it takes its answers. */
  owners: Map<number, (answer: CheckpointWorkerAnswer) => void>;
  /** Stops waiting for their connection to be closed: the thread is held meanwhile. */
  closing: number;
  /** It failed or exited: nothing it was asked will be answered. */
  over: boolean;
}

let shared: SharedThread | undefined;
let nextId = 0;

function checkpointThread(): SharedThread {
  if (shared && !shared.over) return shared;
  // The thread's program is checkpoint-worker.ts.
  const thread: SharedThread = { worker: new Worker(compiledWorker('checkpoint-worker')), owners: new Map(), closing: 0, over: false };
  // The process may exit while the thread sleeps: it holds nothing that a restart needs.
  thread.worker.unref();
  thread.worker.on('message', (answer: CheckpointWorkerAnswer) => thread.owners.get(answer.id)?.(answer));
  const ended = (message: string) => {
    if (thread.over) return;
    thread.over = true;
    for (const [id, owner] of thread.owners) owner({ id, failed: message });
  };
  thread.worker.on('error', (error: Error) => ended(error.message));
  thread.worker.on('exit', () => ended('the checkpoint thread has stopped'));
  shared = thread;
  return thread;
}

/** Closes the checkpointer's connection on the thread, and stops the thread when no other checkpointer uses it. */
async function leave(thread: SharedThread, id: number): Promise<void> {
  thread.owners.delete(id);
  if (thread.over) return;
  if (thread.owners.size > 0 || thread.closing > 0) {
    thread.closing += 1;
    // Held until answered: otherwise a process with nothing else to do would end while waiting.
    thread.worker.ref();
    // Any answer ends the wait: the connection closed, or the thread failed on its way there.
    await new Promise<void>((done) => {
      thread.owners.set(id, () => done());
      thread.worker.postMessage({ close: id } satisfies CheckpointWorkerRequest);
    });
    thread.owners.delete(id);
    thread.closing -= 1;
    if (thread.closing === 0) thread.worker.unref();
    if (thread.over || thread.owners.size > 0 || thread.closing > 0) return;
  }
  // The last one: the thread closes every connection it still has, then exits.
  if (shared === thread) shared = undefined;
  thread.worker.ref();
  const exited = new Promise<void>((done) => thread.worker.once('exit', () => done()));
  thread.worker.postMessage('stop' satisfies CheckpointWorkerRequest);
  await exited;
}

export function createCheckpointer(options: CheckpointerOptions): Checkpointer {
  const id = nextId++;
  let thread: SharedThread | undefined;
  /** A checkpoint is under way or waiting out its pause: nudges until then fold into `nudgedMeanwhile`. */
  let busy = false;
  let nudgedMeanwhile = false;
  let pause: NodeJS.Timeout | undefined;
  let over = false;

  function answered(answer: CheckpointWorkerAnswer): void {
    if ('failed' in answer) return fail(answer.failed);
    if (!nudgedMeanwhile) {
      busy = false;
      return;
    }
    nudgedMeanwhile = false;
    pause = setTimeout(checkpoint, options.pauseMs).unref();
  }

  function checkpoint(): void {
    pause = undefined;
    if (over) return;
    busy = true;
    if (!thread) {
      thread = checkpointThread();
      thread.owners.set(id, answered);
    }
    thread.worker.postMessage({
      checkpoint: id,
      file: options.file,
      busyTimeoutMs: options.busyTimeoutMs,
    } satisfies CheckpointWorkerRequest);
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
    const leaving = thread;
    thread = undefined;
    if (leaving) await leave(leaving, id);
  }

  return {
    nudge() {
      if (busy) nudgedMeanwhile = true;
      else checkpoint();
    },
    stop,
  };
}
