import { join } from 'node:path';
import { infraConnectionEnv, runInfraScript, type InfraCommand } from '../infra-script';
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

export const INFRA_ENV = infraConnectionEnv(START_ORDER_INFRA);

/** Runs `scripts/infra.sh <command> [servers]` on this instance; its progress lines go to `progress`. */
export function infra(command: InfraCommand, servers: readonly Server[], progress: (line: string) => void): Promise<void> {
  return runInfraScript(START_ORDER_INFRA, command, servers, progress);
}
