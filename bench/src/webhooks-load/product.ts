import { spawn } from 'node:child_process';
import { readDevSecret } from '@rsd/platform';
import { EPHEMERAL_PORTS, ROOT } from '../processes';
import { killedOnFailure, parseJsonLine, terminate, whenReady, type WatchedProduct } from '../product-process';
import { trackChild } from '../scale/cleanup';

/** The embedded runtime, as `npm start` runs it. */
const PRODUCT_MAIN = 'services/embedded/dist/main.js';

const READY_TIMEOUT_MS = 60_000;
const STDERR_KEPT = 4096;

/**
 * What the bench sets: every port chosen by the system, receivers on loopback (decision 28's
 * development flag), warnings only. Everything else, the rate limits included, is as shipped.
 */
const BENCH_ENV = {
  ...EPHEMERAL_PORTS,
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  LOG_LEVEL: 'warn',
};

/**
 * Settings a developer's shell may carry that would make the product other than shipped: another
 * token secret (no dev secret in DATA_DIR then), another runtime, other limits or webhook settings.
 */
const INHERITED_SETTINGS_DROPPED = /^(JWT_|RATE_LIMIT|FAILED_AUTH_LIMIT|WEBHOOK_|NOTIFIER_|RUNTIME$|KAFKA_|MONGO_|REDIS_|DATA_DIR$)/;

export interface ProductUrls {
  credentials: string;
  scoreIngest: string;
  notifier: string;
}

/** A product's warning or error lines, counted by message (the first one kept whole). */
export interface LoggedProblem {
  msg: string;
  level: number;
  count: number;
  first: Record<string, unknown>;
}

export interface RunningProduct {
  pid: number;
  urls: ProductUrls;
  /** The HS256 secret the product made in DATA_DIR on its first start (what `rsd token` signs with). */
  devSecret: string;
  problems(): LoggedProblem[];
  /** Why the process ended early, if it did. */
  exited(): string | undefined;
  /** Resolves with that reason when the process ends (early or not). */
  ended: Promise<string>;
  /** SIGTERM and wait (a CPU profile is written at a clean exit); SIGKILL after `killAfterMs`. */
  stop(killAfterMs?: number): Promise<void>;
}

export async function startProduct(dataDir: string, options: { env: Record<string, string>; nodeArgs: string[] }): Promise<RunningProduct> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !INHERITED_SETTINGS_DROPPED.test(name)));
  const child = spawn(process.execPath, [...options.nodeArgs, PRODUCT_MAIN], {
    cwd: ROOT,
    env: { ...inherited, ...BENCH_ENV, ...options.env, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  trackChild(child);
  let stderr = '';
  let exit: string | undefined;
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-STDERR_KEPT)));
  const exited = new Promise<void>((done) =>
    child.once('exit', (code, signal) => {
      exit = `exited with ${signal ?? code}${stderr.trim() ? `: ${stderr.trim()}` : ''}`;
      done();
    }),
  );

  // At LOG_LEVEL=warn the log is a few lines: every one is read, to report what the product complained of.
  // The 'embedded runtime ready' line is at info, so below warn it is not written: the welcome text
  // printed right after it, whatever the level, gives the same URLs.
  const problems = new Map<string, LoggedProblem>();
  const welcomeUrls: Record<string, string> = {};
  let onReady: (urls: Record<string, string>) => void = () => undefined;
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const welcome = WELCOME_URL.exec(line);
      if (welcome) {
        welcomeUrls[WELCOME_KEYS[welcome[1]!]!] = welcome[2]!;
        if (WELCOME_SERVICES.every((name) => name in welcomeUrls)) onReady(welcomeUrls);
      }
      const entry = parseJsonLine(line);
      if (!entry) continue;
      if (entry.msg === 'embedded runtime ready') onReady(Object.fromEntries(Object.entries(entry).map(([k, v]) => [k, String(v)])));
      const level = Number(entry.level);
      if (level >= 40) {
        const msg = String(entry.msg);
        const seen = problems.get(msg);
        if (seen) seen.count += 1;
        else problems.set(msg, { msg, level, count: 1, first: entry });
      }
    }
  });

  const product: WatchedProduct = { child, exited, exit: () => exit };
  return killedOnFailure(product, async () => {
    const ready = await whenReady<Record<string, string>>(
      product,
      READY_TIMEOUT_MS,
      `the product was not ready within ${READY_TIMEOUT_MS / 1000} s`,
      (done) => {
        onReady = done;
      },
    );
    const devSecret = await readDevSecret(dataDir);
    if (!devSecret) throw new Error(`the product made no development secret in ${dataDir}`);
    return {
      pid: child.pid!,
      urls: { credentials: ready.credentials!, scoreIngest: ready.scoreIngest!, notifier: ready.notifier! },
      devSecret,
      problems: () => [...problems.values()],
      exited: () => exit,
      ended: exited.then(() => exit ?? 'exited'),
      stop: async (killAfterMs = 60_000) => {
        if (exit !== undefined) return;
        await terminate(product, killAfterMs);
      },
    };
  });
}

/** `  notifier       http://127.0.0.1:41234/v1   docs …` in the welcome text, keyed as the ready line keys them. */
const WELCOME_URL = /^\s+(read API|credentials|score ingest|notifier)\s+(http\S+)\/v1\s/;
const WELCOME_KEYS: Record<string, string> = {
  'read API': 'readApi',
  credentials: 'credentials',
  'score ingest': 'scoreIngest',
  notifier: 'notifier',
};
const WELCOME_SERVICES = Object.values(WELCOME_KEYS);
