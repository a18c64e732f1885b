import { createPerKeyQueue } from './per-key-queue';

/** A task that records when it starts and ends, and finishes only when told to. */
function aControlledTask(name: string, trace: string[]) {
  let finish!: (outcome?: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = (outcome) => (outcome ? reject(outcome) : resolve());
  });
  const task = async () => {
    trace.push(`${name} started`);
    try {
      await done;
    } finally {
      trace.push(`${name} ended`);
    }
    return name;
  };
  return { task, finish };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Queues a task named first under `firstKey`, then one named second under `secondKey`, and lets both
 * finish once a turn has passed: what had started by then, what each returned, and the whole trace.
 */
async function twoTasksUnder(firstKey: string, secondKey: string) {
  const queue = createPerKeyQueue();
  const trace: string[] = [];
  const first = aControlledTask('first', trace);
  const second = aControlledTask('second', trace);

  const results = [queue.run(firstKey, first.task), queue.run(secondKey, second.task)];
  await turn();
  const startedBeforeAnyEnded = [...trace];
  first.finish();
  second.finish();

  return { results: await Promise.all(results), startedBeforeAnyEnded, trace };
}

describe('per-key queue', () => {
  it('when two tasks share a key, then the second starts only after the first ends', async () => {
    const { results, startedBeforeAnyEnded, trace } = await twoTasksUnder('a', 'a');

    expect(results).toEqual(['first', 'second']);
    expect(startedBeforeAnyEnded).toEqual(['first started']);
    expect(trace).toEqual(['first started', 'first ended', 'second started', 'second ended']);
  });

  it('when tasks have different keys, then they run at the same time', async () => {
    const { startedBeforeAnyEnded } = await twoTasksUnder('a', 'b');

    expect(startedBeforeAnyEnded).toEqual(['first started', 'second started']);
  });

  it('when a task fails, then its caller sees the failure and the next task for the key still runs', async () => {
    const queue = createPerKeyQueue();
    const trace: string[] = [];
    const failing = aControlledTask('failing', trace);
    const next = aControlledTask('next', trace);

    const failed = queue.run('a', failing.task);
    const following = queue.run('a', next.task);
    failing.finish(new Error('boom'));
    next.finish();

    await expect(failed).rejects.toThrow('boom');
    await expect(following).resolves.toBe('next');
  });

  it('when idle is awaited, then it resolves only after every running task has settled', async () => {
    const queue = createPerKeyQueue();
    const trace: string[] = [];
    const running = aControlledTask('running', trace);
    const result = queue.run('a', running.task);
    let idle = false;

    const waiting = queue.idle().then(() => {
      idle = true;
    });
    await turn();
    const idleWhileRunning = idle;
    running.finish();
    await Promise.all([result, waiting]);

    expect(idleWhileRunning).toBe(false);
    expect(idle).toBe(true);
  });
});
