import { spawn } from 'node:child_process';
import { join } from 'node:path';

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
