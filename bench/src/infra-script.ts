import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { ROOT } from './processes';

/**
 * The scripts/infra.sh that runs: this checkout's, or BENCH_INFRA_SCRIPT's. The servers' downloads and build (Kafka's
 * jars, the FerretDB binary) are cached in the .infra/ beside the script, so a new worktree can name a checkout that
 * has them rather than fetch and build them again.
 */
export const INFRA_SCRIPT = resolve(process.env.BENCH_INFRA_SCRIPT ?? join(ROOT, 'scripts/infra.sh'));

/** An instance of scripts/infra.sh's servers: its own INFRA_DIR and ports, so the shared ones are never touched. */
export interface InfraInstance {
  dir: string;
  ports: { KAFKA_PORT: number; KAFKA_CONTROLLER_PORT: number; MONGO_PORT: number; REDIS_PORT: number };
}

export type InfraCommand = 'up' | 'stop' | 'down';

/** The environment that points scripts/infra.sh at `instance`. */
export function infraShellEnv({ dir, ports }: InfraInstance): NodeJS.ProcessEnv {
  return { ...process.env, INFRA_DIR: dir, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) };
}

/** The connection variables the services need to reach `instance`. */
export function infraConnectionEnv({ ports }: InfraInstance): { KAFKA_BROKERS: string; MONGO_URL: string; REDIS_URL: string } {
  return {
    KAFKA_BROKERS: `127.0.0.1:${ports.KAFKA_PORT}`,
    MONGO_URL: `mongodb://127.0.0.1:${ports.MONGO_PORT}/`,
    REDIS_URL: `redis://127.0.0.1:${ports.REDIS_PORT}`,
  };
}

/**
 * Runs `scripts/infra.sh <command> [servers]` (INFRA_SCRIPT) on `instance`; its progress lines go to `progress`,
 * and a failure carries the last 20 of them.
 */
export function runInfraScript(
  instance: InfraInstance,
  command: InfraCommand,
  servers: readonly string[],
  progress: (line: string) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn('bash', [INFRA_SCRIPT, command, ...servers], {
      cwd: ROOT,
      env: infraShellEnv(instance),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let tail: string[] = [];
    let pending = '';
    child.stderr.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        progress(line);
        tail = [...tail.slice(-19), line];
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`scripts/infra.sh ${command} ${servers.join(' ')} exited with ${code}\n${tail.join('\n')}`));
    });
  });
}
