import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { stopInOrder } from './shutdown';

/**
 * A real process with onShutdown and a closer that takes a while; the signals come as they do when it
 * runs under npm: one to the process group, one more forwarded by npm.
 */
function startChild(): { output: () => string; exited: Promise<number | null>; pid: number } {
  // Node runs the TypeScript source itself (type stripping): the process is the module as shipped.
  const shutdown = join(__dirname, 'shutdown.ts');
  const child = spawn(
    process.execPath,
    [
      '-e',
      `
      const { onShutdown } = require(${JSON.stringify(shutdown)});
      const log = { info: (a, b) => console.log(JSON.stringify(b ?? a)), error: (a, b) => console.log(JSON.stringify(b ?? a)), flush: (done) => done() };
      onShutdown(log, [() => new Promise((resolve) => setTimeout(resolve, 300))]);
      console.log('"ready"');
      setInterval(() => undefined, 1000);
      `,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '--no-warnings' } },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { output: () => output, exited, pid: child.pid! };
}

describe('onShutdown', () => {
  test('when a second SIGTERM arrives while it shuts down, then it is ignored: the closers finish and the process says stopped', async () => {
    const child = startChild();
    for (let tries = 0; !child.output().includes('ready') && tries < 100; tries += 1) await new Promise((r) => setTimeout(r, 50));
    process.kill(child.pid, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 50));
    process.kill(child.pid, 'SIGTERM');

    expect(await child.exited).toBe(0);
    expect(child.output()).toContain('"shutting down"');
    expect(child.output()).toContain('"stopped"');
  });
});

describe('stopInOrder', () => {
  it('when parts are jobs, opened things and steps, then each is stopped after the one before it, in the order given', async () => {
    const order: string[] = [];
    const slowly = (name: string) => () => new Promise<void>((done) => setTimeout(() => (order.push(name), done()), 10));
    const job = { stop: slowly('job') };
    const store = { close: slowly('store') };
    await stopInOrder(job, slowly('step'), store)();
    expect(order).toEqual(['job', 'step', 'store']);
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
