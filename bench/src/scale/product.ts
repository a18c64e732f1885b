import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { killedOnFailure, parseJsonLine, terminate, whenReady, type WatchedProduct } from '../product-process';
import { EPHEMERAL_PORTS } from '../processes';
import { trackChild } from './cleanup';
import { PRODUCT_MAIN } from './options';

export interface ProductUrls {
  readApi: string;
  credentials: string;
  scoreIngest: string;
}

export interface RunningProduct {
  pid: number;
  urls: ProductUrls;
  /** From spawn to the 'embedded runtime ready' log line, in ms. */
  spawnToReadyMs: number;
  /**
   * Seconds the start spent importing a data directory of the earlier layout, as the SQLite storage's
   * import log lines say ('imported a file …', with `seconds`); undefined when none was logged.
   */
  importS: number | undefined;
  /** Why the process ended early, if it did (a crash under load is a finding, not a bench failure). */
  exited(): string | undefined;
  /** SIGTERM, then the ms until the process has exited (SIGKILL after `killAfterMs`). */
  stop(killAfterMs?: number): Promise<number>;
}

const STDERR_KEPT = 4096;
/** Chunks of stdout kept: enough for the last lines, cheap enough not to weigh on the load's CPU. */
const STDOUT_CHUNKS_KEPT = 8;

/** Warnings, errors and the shutdown lines of the product's log. */
function isWorthSaying(line: string): boolean {
  const entry = parseJsonLine(line);
  return entry !== undefined && (Number(entry.level) >= 40 || entry.msg === 'shutting down');
}

/**
 * Starts `node services/embedded/dist/main.js` on a data directory, as `npm start` does, and waits
 * for its ready line. Like processes.ts's startNode, but with a deadline of the caller's (a start
 * on the file storage replays everything, minutes at 1M) and the child killed if it is missed.
 */
export async function startProduct(
  productRoot: string,
  dataDir: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<RunningProduct> {
  const spawnedAt = performance.now();
  // Relative to its tree, as `npm start` runs it; BENCH_PRODUCT_NODE_ARGS adds node's own options (--cpu-prof, --trace-gc).
  const nodeArgs = process.env.BENCH_PRODUCT_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, PRODUCT_MAIN], {
    cwd: productRoot,
    // Every server on a port of its own choosing (the ready line names them), the notifier's too
    // where the product has one: two runs, or a developer's `npm start`, never collide.
    env: {
      ...process.env,
      ...env,
      DATA_DIR: dataDir,
      ...EPHEMERAL_PORTS,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  trackChild(child);
  let stderr = '';
  let exit: string | undefined;
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-STDERR_KEPT)));
  // If the process ends early, its last warnings and errors say why.
  const stdoutTail: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdoutTail.push(chunk) > STDOUT_CHUNKS_KEPT && stdoutTail.shift());
  const exited = new Promise<void>((done) =>
    child.once('exit', (code, signal) => {
      const lines = Buffer.concat(stdoutTail).toString().split('\n').filter(isWorthSaying);
      const said = [...lines, stderr.trim()].filter(Boolean).join('\n');
      exit = `exited with ${signal ?? code}${said ? `: ${said}` : ''}`;
      done();
    }),
  );

  // Until the ready line, every line is read: the ready line gives the ports, import lines their time.
  let pending = '';
  let importS: number | undefined;
  let onReady: (entry: Record<string, unknown>) => void = () => undefined;
  const readLines = (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const entry = parseJsonLine(line);
      if (typeof entry?.msg === 'string' && /\bimport/.test(entry.msg) && typeof entry.seconds === 'number') {
        importS = (importS ?? 0) + entry.seconds;
      }
      if (entry?.msg === 'embedded runtime ready') onReady(entry);
    }
  };
  child.stdout.on('data', readLines);
  // The whole output, for what node's options print (the bench keeps only its tail).
  if (process.env.BENCH_PRODUCT_STDOUT) child.stdout.pipe(createWriteStream(process.env.BENCH_PRODUCT_STDOUT));
  const product: WatchedProduct = { child, exited, exit: () => exit };
  return killedOnFailure(product, async () => {
    const ready = await whenReady<Record<string, unknown>>(product, timeoutMs, `not ready within ${timeoutMs / 1000} s`, (done) => {
      onReady = done;
    });
    const spawnToReadyMs = performance.now() - spawnedAt;
    // From here on only the tail is kept; the listener left drains stdout (the request log), so
    // the child never blocks on a full pipe.
    child.stdout.off('data', readLines);
    return {
      pid: child.pid!,
      urls: { readApi: String(ready.readApi), credentials: String(ready.credentials), scoreIngest: String(ready.scoreIngest) },
      spawnToReadyMs,
      importS,
      exited: () => exit,
      stop: async (killAfterMs = 60_000) => {
        const asked = performance.now();
        if (exit !== undefined) return 0;
        await terminate(product, killAfterMs);
        return performance.now() - asked;
      },
    };
  });
}
