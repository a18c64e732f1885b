import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from '../processes';

export interface ServiceSpec {
  name: string;
  script: string;
  port: number;
  env: Record<string, string>;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

export interface ServiceProcess {
  name: string;
  url: string;
  logFile: string;
  spawnedAt: number;
  /** Set when the process ended before it was asked to stop. */
  unexpectedExit: Exit | undefined;
  /** SIGTERM, SIGKILL after the grace; resolves with how it ended. */
  stop(): Promise<Exit>;
}

const STOP_GRACE_MS = 20_000;

/** Starts a service as its own process, its output in a log file, without waiting for anything. */
export function spawnService(spec: ServiceSpec, logDir: string): ServiceProcess {
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
  const exited = new Promise<Exit>((done) => child.once('exit', (code, signal) => done({ code, signal, at: Date.now() })));
  const service: ServiceProcess = {
    name: spec.name,
    url: `http://127.0.0.1:${spec.port}`,
    logFile,
    spawnedAt: Date.now(),
    unexpectedExit: undefined,
    stop: async () => {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      const exit = await exited;
      clearTimeout(timer);
      return exit;
    },
  };
  void exited.then((exit) => {
    if (!stopping) service.unexpectedExit = exit;
  });
  return service;
}

export function logTail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Error and fatal lines (pino levels 50 and 60) of a service's log, by message. */
export function errorLines(logFile: string): Map<string, number> {
  const counts = new Map<string, number>();
  let text = '';
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return counts;
  }
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; component?: string };
      if ((entry.level ?? 0) < 50) continue;
      const key = `${entry.component ? `${entry.component}: ` : ''}${entry.msg ?? '(no message)'}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    } catch {
      // a line cut short by a kill; the exit itself is reported
    }
  }
  return counts;
}
