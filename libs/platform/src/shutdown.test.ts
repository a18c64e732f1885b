import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { stopInOrder } from './shutdown';

/**
 * A real process with onShutdown and a closer that lasts until the test writes a line to its input; the
 * signals come as they do when it runs under npm: one to the process group, one more forwarded by npm.
 */
function startChild(): {
  output: () => string;
  until: (text: string) => Promise<void>;
  finishClosing: () => void;
  exited: Promise<number | null>;
  pid: number;
} {
  // Node runs the TypeScript source itself (type stripping): the process is the module as shipped.
  const shutdown = join(__dirname, 'shutdown.ts');
  const child = spawn(
    process.execPath,
    [
      '-e',
      `
      const { onShutdown } = require(${JSON.stringify(shutdown)});
      const log = { info: (a, b) => console.log(JSON.stringify(b ?? a)), error: (a, b) => console.log(JSON.stringify(b ?? a)), flush: (done) => done() };
      onShutdown(log, [() => new Promise((resolve) => process.stdin.once('data', resolve))]);
      console.log('"ready"');
      setInterval(() => undefined, 1000);
      `,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '--no-warnings' } },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stdin.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const until = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!output.includes(text)) return;
        child.stdout.off('data', check);
        resolve();
      };
      child.stdout.on('data', check);
      void exited.then(() => reject(new Error(`exited before saying ${text}:\n${output}`)));
      check();
    });
  return { output: () => output, until, finishClosing: () => child.stdin.write('go\n'), exited, pid: child.pid! };
}

describe('onShutdown', () => {
  test('when a second SIGTERM arrives while it shuts down, then it is ignored: the closers finish and the process says stopped', async () => {
    const child = startChild();
    await child.until('ready');
    process.kill(child.pid, 'SIGTERM');
    await child.until('"shutting down"');
    // The closer is still running (it waits for the line below): the second signal arrives mid-shutdown.
    process.kill(child.pid, 'SIGTERM');
    child.finishClosing();

    expect(await child.exited).toBe(0);
    expect(child.output()).toContain('"shutting down"');
    expect(child.output()).toContain('"stopped"');
  });
});

describe('stopInOrder', () => {
  it('when parts are jobs, opened things and steps, then each is stopped after the one before it, in the order given', async () => {
    const order: string[] = [];
    // Each part yields a few turns before it is done: a part started before the one before it finished shows in the order.
    const slowly = (name: string) => async () => {
      order.push(`${name} started`);
      for (let turn = 0; turn < 3; turn += 1) await Promise.resolve();
      order.push(`${name} done`);
    };
    const job = { stop: slowly('job') };
    const store = { close: slowly('store') };
    await stopInOrder(job, slowly('step'), store)();
    expect(order).toEqual(['job started', 'job done', 'step started', 'step done', 'store started', 'store done']);
  });

  it('when a part can be closed and also has a stop of its own, then it is closed, not stopped', async () => {
    class Subscription {
      readonly calls: string[] = [];
      close(): Promise<void> {
        this.calls.push('close');
        return Promise.resolve();
      }
      // Private to the type, there at run time: what a subscription's loop uses.
      private stop(): Promise<void> {
        this.calls.push('stop');
        return Promise.resolve();
      }
    }
    const subscription = new Subscription();
    await stopInOrder(subscription)();
    expect(subscription.calls).toEqual(['close']);
  });

  it("when a part fails, then the parts after it are not stopped and the failure is the caller's", async () => {
    const after = { close: jest.fn(() => Promise.resolve()) };
    await expect(stopInOrder({ stop: () => Promise.reject(new Error('stuck')) }, after)()).rejects.toThrow('stuck');
    expect(after.close).not.toHaveBeenCalled();
  });
});
