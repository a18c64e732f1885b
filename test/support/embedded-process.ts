import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import { eventually as retried } from '@rsd/testkit';

const runFile = promisify(execFile);

export const REPO_ROOT = resolve(__dirname, '../..');

export interface EmbeddedProcess {
  urls: { readApi: string; credentials: string; scoreIngest: string; notifier: string; console: string };
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  stop(): Promise<number | null>;
  /** SIGKILL to the whole process group: a crash, with no shutdown of any kind. */
  kill(): Promise<void>;
}

/**
 * Starts the product exactly as a newcomer does, `npm start`, on ephemeral ports, and waits for the
 * log line that says it is ready (so LOG_LEVEL must be info or finer).
 */
export async function startEmbedded(env: Record<string, string>, timeoutMs = 60_000): Promise<EmbeddedProcess> {
  const child = spawn('npm', ['start', '--silent'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      READ_API_PORT: '0',
      CREDENTIALS_PORT: '0',
      SCORE_INGEST_PORT: '0',
      NOTIFIER_PORT: '0',
      CONSOLE_PORT: '0',
      ...env,
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  // 'close', not 'exit': the output the process wrote last is in only once its pipes are closed.
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));

  const ready = new Promise<EmbeddedProcess['urls']>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`not ready within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const poll = setInterval(() => {
      const ready = readyLine(output);
      if (ready) {
        clearInterval(poll);
        clearTimeout(timer);
        done(ready);
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(poll);
      clearTimeout(timer);
      fail(new Error(`npm start exited with ${code}:\n${output}`));
    });
  });
  let urls: EmbeddedProcess['urls'];
  try {
    urls = await ready;
  } catch (error) {
    await stopGroup(child, exited);
    throw error;
  }

  return {
    urls,
    output: () => output,
    stop: () => stopGroup(child, exited),
    kill: async () => {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
      await exited;
    },
  };
}

function readyLine(output: string): EmbeddedProcess['urls'] | undefined {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as Partial<EmbeddedProcess['urls']> & { msg?: string };
      if (
        entry.msg === 'embedded runtime ready' &&
        entry.readApi &&
        entry.credentials &&
        entry.scoreIngest &&
        entry.notifier &&
        entry.console
      ) {
        return {
          readApi: entry.readApi,
          credentials: entry.credentials,
          scoreIngest: entry.scoreIngest,
          notifier: entry.notifier,
          console: entry.console,
        };
      }
    } catch {
      // Not a log line (npm's own output, the welcome text).
    }
  }
  return undefined;
}

/** SIGTERM to the whole process group (npm and the node process it started), SIGKILL if it lingers. */
async function stopGroup(child: ChildProcess, exited: Promise<number | null>): Promise<number | null> {
  // Gone already, by exit or by a signal: stopping again is a no-op, not an ESRCH.
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return child.exitCode;
  process.kill(-child.pid, 'SIGTERM');
  const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, 'SIGKILL'), 15_000);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

/** Polls until `check` returns a value, within a bound: for things that happen a little later. */
export function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, everyMs = 100): Promise<T> {
  return retried(
    async () => {
      const value = await check();
      if (value === undefined) throw new Error(`condition not met within ${timeoutMs} ms`);
      return value;
    },
    { timeoutMs, intervalMs: everyMs },
  );
}

/** How a command ended: its exit code and both streams. */
export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `rsd` bin (tools/cli/bin/rsd.js) as a user would, with `env` on top of this process's; never throws. */
export async function runRsd(args: readonly string[], env: Record<string, string>): Promise<CommandRun> {
  try {
    const { stdout, stderr } = await runFile('node', [join(REPO_ROOT, 'tools/cli/bin/rsd.js'), ...args], {
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as CommandRun;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** `rsd authorizations create`'s arguments for a grant of `org` to a `recipientType` with `scopes` (comma-separated), then `more`. */
export function rsdCreateArgs(org: string, recipientType: string, scopes: string, ...more: string[]): string[] {
  return ['authorizations', 'create', '--org', org, '--recipient-type', recipientType, '--scopes', scopes, ...more];
}

/** Whether the service at `url` answers its /readyz with 200 now (false when nothing answers). */
export function answersReady(url: string): Promise<boolean> {
  return fetch(`${url}/readyz`).then(
    (res) => res.status === 200,
    () => false,
  );
}

/** Once the service at `url` is ready (its /readyz answers 200); fails after `timeoutMs`. */
export function untilReady(url: string, timeoutMs = 90_000): Promise<true> {
  return eventually(async () => ((await answersReady(url)) ? true : undefined), timeoutMs, 200);
}

/**
 * Whether the running product's notifier has handled every event in its log so far and has no delivery
 * waiting (none queued, none between retries), read the way any SQLite client would (read-only, beside
 * it). Once it holds, nothing more will be sent for those events: what a test asserts is not sent, it
 * asserts after this, not after a sleep.
 */
export function notifierIdle(dataDir: string): boolean {
  const db = new DatabaseSync(join(dataDir, 'rsd.sqlite'), { readOnly: true });
  try {
    const last = Number(db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM events').get()?.seq ?? 0);
    // Its group is `notifier.<where its views are kept>`; the position is the last record it handled.
    const handled = Number(
      db.prepare("SELECT COALESCE(MAX(seq), 0) AS seq FROM positions WHERE group_id LIKE 'notifier.%'").get()?.seq ?? 0,
    );
    const waiting = Number(db.prepare('SELECT COUNT(*) AS waiting FROM webhook_deliveries WHERE done = 0').get()?.waiting ?? 0);
    return handled >= last && waiting === 0;
  } finally {
    db.close();
  }
}

/** Resolves once `notifierIdle` holds (within 15 s: the notifier writes its position every so often, not at once). */
export function notifierSettled(dataDir: string): Promise<true> {
  return eventually(() => Promise.resolve(notifierIdle(dataDir) || undefined), 15_000, 50);
}

/** The values in the embedded runtime's event log, read the way any SQLite client would (read-only, beside the running product). */
export function eventLogValues(dataDir: string): string[] {
  const db = new DatabaseSync(join(dataDir, 'rsd.sqlite'), { readOnly: true });
  try {
    return db
      .prepare('SELECT value FROM events ORDER BY seq')
      .all()
      .map((row) => String(row.value));
  } finally {
    db.close();
  }
}
