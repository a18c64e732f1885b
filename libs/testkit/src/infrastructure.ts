import { existsSync } from 'node:fs';

/**
 * Where the infrastructure suites find their servers: the environment (`scripts/infra.sh up`,
 * CI), else Testcontainers when a Docker engine is reachable, else nowhere — and then the suite is
 * skipped with one line saying how to enable it, unless REQUIRE_INFRA is set (CI), where a missing
 * server is a failure.
 */
export type InfraKind = 'kafka' | 'mongo' | 'redis';

const ENV_VAR: Record<InfraKind, string> = { kafka: 'KAFKA_BROKERS', mongo: 'MONGO_URL', redis: 'REDIS_URL' };

export type InfraTarget = { source: 'env'; url: string } | { source: 'testcontainers' };

function dockerAvailable(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

export function infraTarget(kind: InfraKind): InfraTarget | undefined {
  const url = process.env[ENV_VAR[kind]];
  if (url) return { source: 'env', url };
  if (dockerAvailable()) return { source: 'testcontainers' };
  return undefined;
}

const required = () => ['1', 'true'].includes(process.env.REQUIRE_INFRA ?? '');

/**
 * `describe` when the server can be had, else a skipped describe with an explanation. Under
 * REQUIRE_INFRA the suite runs regardless and fails on its first connection.
 */
export function describeWithInfra(kind: InfraKind, name: string, body: (target: () => InfraTarget) => void): void {
  const target = infraTarget(kind);
  if (!target && !required()) {
    process.stderr.write(
      `[infra] skipping "${name}": set ${ENV_VAR[kind]} (eval "$(scripts/infra.sh up)") or run a Docker engine for Testcontainers\n`,
    );
    describe.skip(name, () => body(() => ({ source: 'testcontainers' })));
    return;
  }
  describe(name, () =>
    body(() => {
      if (!target) throw new Error(`REQUIRE_INFRA is set but ${ENV_VAR[kind]} is not, and no Docker engine answers`);
      return target;
    }),
  );
}

/** Container handles, so suites can start a server once and stop it afterwards. */
export interface StartedServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts (or, from the environment, just names) the server a suite needs. */
export async function startInfra(kind: InfraKind, target: InfraTarget): Promise<StartedServer> {
  if (target.source === 'env') return { url: target.url, stop: () => Promise.resolve() };
  switch (kind) {
    case 'kafka': {
      const { KafkaContainer } = await import('@testcontainers/kafka');
      const container = await new KafkaContainer('confluentinc/cp-kafka:7.9.0').withKraft().start();
      return { url: `${container.getHost()}:${container.getMappedPort(9093)}`, stop: async () => void (await container.stop()) };
    }
    case 'mongo': {
      const { MongoDBContainer } = await import('@testcontainers/mongodb');
      const container = await new MongoDBContainer('mongo:7.0').start();
      return { url: `${container.getConnectionString()}/?directConnection=true`, stop: async () => void (await container.stop()) };
    }
    case 'redis': {
      const { RedisContainer } = await import('@testcontainers/redis');
      const container = await new RedisContainer('redis:7.4').start();
      return { url: container.getConnectionUrl(), stop: async () => void (await container.stop()) };
    }
  }
}
