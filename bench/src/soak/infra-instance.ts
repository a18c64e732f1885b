import { join } from 'node:path';
import { infraConnectionEnv, runInfraScript, type InfraCommand } from '../infra-script';
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
  run(command: InfraCommand, servers?: Server[]): Promise<void>;
  /** Resolves when no infra.sh command of this instance is running (cleanup must not race a restart). */
  idle(): Promise<void>;
}

export function soakInfra(progress: (line: string) => void): InfraInstance {
  let running: Promise<void> = Promise.resolve();

  const run = (command: InfraCommand, servers: Server[] = []): Promise<void> => {
    const done = runInfraScript(SOAK_INFRA, command, servers, progress);
    running = done.catch(() => undefined);
    return done;
  };

  return {
    env: infraConnectionEnv(SOAK_INFRA),
    logs: SOAK_INFRA.dir,
    run,
    idle: () => running,
  };
}
