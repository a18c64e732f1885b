import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../processes';
import type { Server } from './options';

/**
 * This script's own Kafka, MongoDB-wire server and Redis: scripts/infra.sh with an INFRA_DIR and
 * ports of its own, so the shared servers (default ports, state in .infra/) are never touched.
 * The ports stay below Linux's ephemeral range (32768–60999): the services dial them over and
 * over before they listen, and a dial to a free port in that range can be given that very port as
 * its own source port (a TCP self-connect), which then holds it and the server cannot bind.
 */
export const START_ORDER_INFRA = {
  dir: join(ROOT, '.infra/start-order'),
  ports: { KAFKA_PORT: 19392, KAFKA_CONTROLLER_PORT: 19393, MONGO_PORT: 27318, REDIS_PORT: 16579 },
};

export const INFRA_ENV = {
  KAFKA_BROKERS: `127.0.0.1:${START_ORDER_INFRA.ports.KAFKA_PORT}`,
  MONGO_URL: `mongodb://127.0.0.1:${START_ORDER_INFRA.ports.MONGO_PORT}/`,
  REDIS_URL: `redis://127.0.0.1:${START_ORDER_INFRA.ports.REDIS_PORT}`,
};

/** The environment that points scripts/infra.sh at this instance. */
export function infraShellEnv(): NodeJS.ProcessEnv {
  const { dir, ports } = START_ORDER_INFRA;
  return { ...process.env, INFRA_DIR: dir, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) };
}

/** Runs `scripts/infra.sh <command> [servers]` on this instance; its progress lines go to `progress`. */
export function infra(command: 'up' | 'stop' | 'down', servers: readonly Server[], progress: (line: string) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn('bash', [join(ROOT, 'scripts/infra.sh'), command, ...servers], {
      cwd: ROOT,
      env: infraShellEnv(),
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
