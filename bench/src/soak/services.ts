import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from '../processes';

export interface ServiceProcess {
  name: string;
  url: string;
  pid: number;
  logFile: string;
  /** Set when the process ended before the soak asked it to. */
  crashed?: { code: number | null; signal: NodeJS.Signals | null; at: number };
  stop(): Promise<void>;
}

export interface ServiceSpec {
  name: string;
  script: string;
  port: number;
  env: Record<string, string>;
}

const STOP_GRACE_MS = 15_000;

/**
 * Starts a service as its own process with its output in a log file (nothing for the soak to drain,
 * evidence kept after the run) and waits for its /readyz.
 */
export async function startService(spec: ServiceSpec, logDir: string): Promise<ServiceProcess> {
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${spec.name}.log`);
  const out = openSync(logFile, 'w');
  const child = spawn(process.execPath, [resolve(ROOT, spec.script)], {
    cwd: ROOT,
    env: { ...process.env, ...spec.env },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  let stopping = false;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const service: ServiceProcess = {
    name: spec.name,
    url: `http://127.0.0.1:${spec.port}`,
    pid: child.pid ?? -1,
    logFile,
    stop: async () => {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
  child.once('exit', (code, signal) => {
    if (!stopping) service.crashed = { code, signal, at: Date.now() };
  });

  const deadline = Date.now() + 90_000;
  for (;;) {
    if (service.crashed) throw new Error(`${spec.name} exited during start-up\n${tail(logFile)}`);
    const status = await fetch(`${service.url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return service;
    if (Date.now() > deadline) {
      await service.stop();
      throw new Error(`${spec.name} not ready within 90 s (last /readyz: ${status || 'no answer'})\n${tail(logFile)}`);
    }
    await new Promise((done) => setTimeout(done, 250));
  }
}

function tail(file: string, lines = 20): string {
  return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
}

/** Error and fatal lines (pino levels 50 and 60) of a service's log, by message. */
export function errorLines(logFile: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string };
      if ((entry.level ?? 0) >= 50) counts.set(entry.msg ?? '(no message)', (counts.get(entry.msg ?? '(no message)') ?? 0) + 1);
    } catch {
      // a line cut by a crash; the crash itself is reported
    }
  }
  return counts;
}
