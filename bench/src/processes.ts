import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../..');

/** Every server of the product on a port of the system's choosing (its ready line names them): two runs, or a developer's `npm start`, never collide. */
export const EPHEMERAL_PORTS = {
  READ_API_PORT: '0',
  CREDENTIALS_PORT: '0',
  SCORE_INGEST_PORT: '0',
  NOTIFIER_PORT: '0',
  CONSOLE_PORT: '0',
};

export interface Started {
  child: ChildProcess;
  /** The first JSON log line that matched. */
  ready: Record<string, unknown>;
  /** Its standard output (JSON lines), there until it exits. */
  logFile: string;
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

/**
 * BENCH_OWN_SESSION: which servers `npm run bench` starts in a session of their own (setsid),
 * as `../shared/bench/read-floor.sh` starts the product: `product` (the harness's footing), `all`, or
 * unset (every server in the bench's session, the default). With the kernel's autogroup scheduling
 * (`/proc/sys/kernel/sched_autogroup_enabled`), a session is a scheduling group: a server in a
 * session of its own is scheduled apart from the load generator in the bench's, and on a busy machine
 * it then waits for each request instead of taking several at a wake-up, which costs it more CPU per
 * request. A server in the load generator's session shares its group's share with it, as the floor
 * and bare express do in the harness. docs/contributors/benchmarks.md says what it changes.
 */
export function ownSession(side: 'product' | 'floor' | 'baseline'): boolean {
  const which = process.env.BENCH_OWN_SESSION;
  return which === 'all' || (which === 'product' && side === 'product');
}

/**
 * Starts a node script with its standard output going to a file, as `npm start > file` would, and
 * waits for the JSON log line that `isReady` accepts. A file, not a pipe: the bench's own process
 * runs the load generator, and a pipe it drains between requests pushes back on the server's
 * logger (pino then buffers and retries its writes), a cost the floor, which logs to a file, never
 * pays. The read path's measure compares servers that log to a file.
 */
export async function startNode(
  script: string,
  args: string[],
  env: Record<string, string>,
  isReady: (line: Record<string, unknown>) => boolean,
  { detached = false }: { detached?: boolean } = {},
): Promise<Started> {
  const logDir = mkdtempSync(join(tmpdir(), 'rsd-bench-log-'));
  const logFile = join(logDir, 'stdout.ndjson');
  const stdout = openSync(logFile, 'a');
  const child = spawn(process.execPath, [...profileArgs(), resolve(ROOT, script), ...args], {
    cwd: ROOT,
    env: { ...withoutTracing(process.env), ...env },
    stdio: ['ignore', stdout, 'pipe'],
    // A session of its own (setsid), when asked: see ownSession.
    detached,
  });
  closeSync(stdout);
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const removeLog = () => rmSync(logDir, { recursive: true, force: true });
  child.once('exit', removeLog);
  const ready = await new Promise<Record<string, unknown>>((done, fail) => {
    let read = 0;
    let pending = '';
    const poll = setInterval(() => {
      const text = readFileSync(logFile, 'utf8');
      pending += text.slice(read);
      read = text.length;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (isReady(entry)) {
          finish();
          done(entry);
          return;
        }
      }
    }, 50);
    const timer = setTimeout(() => {
      finish();
      fail(new Error(`${script} not ready in 60 s\n${errors}`));
    }, 60_000);
    const exited = (code: number | null) => {
      finish();
      fail(new Error(`${script} exited with ${code}\n${errors}`));
    };
    child.once('exit', exited);
    function finish() {
      clearInterval(poll);
      clearTimeout(timer);
      child.off('exit', exited);
    }
  });
  return {
    child,
    ready,
    logFile,
    stop: () =>
      new Promise((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * The bench's own environment without the OpenTelemetry variables: a shell that exported an endpoint
 * would otherwise trace every target. Only a target given them explicitly traces (BENCH_OTLP_ENDPOINT).
 */
function withoutTracing(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('OTEL_')));
}
