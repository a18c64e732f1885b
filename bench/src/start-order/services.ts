import { readFileSync } from 'node:fs';
import { spawnService as spawnServiceProcess, type ServiceProcess, type ServiceSpec } from '../service-process';

export { logTail, type Exit, type ServiceProcess, type ServiceSpec } from '../service-process';

const STOP_GRACE_MS = 20_000;

/** Starts a service as its own process, its output in a log file, without waiting for anything. */
export function spawnService(spec: ServiceSpec, logDir: string): ServiceProcess {
  return spawnServiceProcess(spec, logDir, STOP_GRACE_MS);
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
