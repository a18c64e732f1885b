import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../..');

export interface Started {
  child: ChildProcess;
  /** The first JSON log line that matched. */
  ready: Record<string, unknown>;
  stop(): Promise<void>;
}

/**
 * BENCH_PROFILE_DIR: every process the bench starts writes a V8 CPU profile there when it exits
 * (open it in Chrome's DevTools), so the product and the floor are profiled under the same load.
 */
export function profileArgs(): string[] {
  const dir = process.env.BENCH_PROFILE_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(dir)}`] : [];
}

/** Starts a node script and waits for the JSON log line that `isReady` accepts. */
export async function startNode(
  script: string,
  args: string[],
  env: Record<string, string>,
  isReady: (line: Record<string, unknown>) => boolean,
): Promise<Started> {
  const child = spawn(process.execPath, [...profileArgs(), resolve(ROOT, script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let pending = '';
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const ready = await new Promise<Record<string, unknown>>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${script} not ready in 60 s\n${errors}`)), 60_000);
    child.once('exit', (code) => fail(new Error(`${script} exited with ${code}\n${errors}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (isReady(entry)) {
          clearTimeout(timer);
          done(entry);
        }
      }
    });
  });
  // Keep draining stdout so the child never blocks on a full pipe (its access log is part of the cost measured).
  child.stdout?.removeAllListeners('data');
  child.stdout?.resume();
  return {
    child,
    ready,
    stop: () =>
      new Promise((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}
