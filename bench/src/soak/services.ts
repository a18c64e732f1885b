import { readFileSync } from 'node:fs';
import { logTail, spawnService, type ServiceProcess, type ServiceSpec } from '../service-process';

export type { ServiceProcess, ServiceSpec } from '../service-process';

const STOP_GRACE_MS = 15_000;

/** Starts a service as its own process with its output in a log file, and waits for its /readyz. */
export async function startService(spec: ServiceSpec, logDir: string): Promise<ServiceProcess> {
  const service = spawnService(spec, logDir, STOP_GRACE_MS);
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (service.unexpectedExit) throw new Error(`${spec.name} exited during start-up\n${logTail(service.logFile, 20)}`);
    const status = await fetch(`${service.url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return service;
    if (Date.now() > deadline) {
      await service.stop();
      throw new Error(`${spec.name} not ready within 90 s (last /readyz: ${status || 'no answer'})\n${logTail(service.logFile, 20)}`);
    }
    await new Promise((done) => setTimeout(done, 250));
  }
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
