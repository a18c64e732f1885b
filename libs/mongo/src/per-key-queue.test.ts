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

describe('per-key queue', () => {
  it('when two tasks share a key, then the second starts only after the first ends', async () => {
    const queue = createPerKeyQueue();
    const trace: string[] = [];
    const first = aControlledTask('first', trace);
    const second = aControlledTask('second', trace);

    const results = [queue.run('a', first.task), queue.run('a', second.task)];
    await turn();
    const beforeFirstEnds = [...trace];
    first.finish();
    second.finish();

    expect(await Promise.all(results)).toEqual(['first', 'second']);
    expect(beforeFirstEnds).toEqual(['first started']);
    expect(trace).toEqual(['first started', 'first ended', 'second started', 'second ended']);
  });

  it('when tasks have different keys, then they run at the same time', async () => {
    const queue = createPerKeyQueue();
    const trace: string[] = [];
    const first = aControlledTask('first', trace);
    const second = aControlledTask('second', trace);

    const results = [queue.run('a', first.task), queue.run('b', second.task)];
    await turn();
    const started = [...trace];
    first.finish();
    second.finish();
    await Promise.all(results);

    expect(started).toEqual(['first started', 'second started']);
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
