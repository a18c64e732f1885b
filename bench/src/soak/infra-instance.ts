import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../processes';

export type Server = 'kafka' | 'mongo' | 'redis';

/**
 * The soak's own Kafka, FerretDB and Redis: scripts/infra.sh with its own INFRA_DIR and ports, so
 * the shared servers (default ports, state in .infra/) are never stopped or restarted by a soak.
 */
export const SOAK_INFRA = {
  dir: join(ROOT, '.infra/soak'),
  ports: { KAFKA_PORT: 29092, KAFKA_CONTROLLER_PORT: 29093, MONGO_PORT: 27028, REDIS_PORT: 26379 },
};

export interface InfraInstance {
  /** The connection variables the services need. */
  env: { KAFKA_BROKERS: string; MONGO_URL: string; REDIS_URL: string };
  logs: string;
  run(command: 'up' | 'stop' | 'down', servers?: Server[]): Promise<void>;
  /** Resolves when no infra.sh command of this instance is running (cleanup must not race a restart). */
  idle(): Promise<void>;
}

export function soakInfra(progress: (line: string) => void): InfraInstance {
  const { dir, ports } = SOAK_INFRA;
  const env = { ...process.env, INFRA_DIR: dir, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) };
  let running: Promise<void> = Promise.resolve();

  const run = (command: 'up' | 'stop' | 'down', servers: Server[] = []): Promise<void> => {
    const done = new Promise<void>((resolve, reject) => {
      const child = spawn('bash', [join(ROOT, 'scripts/infra.sh'), command, ...servers], {
        cwd: ROOT,
        env,
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
    running = done.catch(() => undefined);
    return done;
  };

  return {
    env: {
      KAFKA_BROKERS: `127.0.0.1:${ports.KAFKA_PORT}`,
      MONGO_URL: `mongodb://127.0.0.1:${ports.MONGO_PORT}/`,
      REDIS_URL: `redis://127.0.0.1:${ports.REDIS_PORT}`,
    },
    logs: dir,
    run,
    idle: () => running,
  };
}
