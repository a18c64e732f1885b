import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as KafkaModule from '@testcontainers/kafka';
import type * as MongoDBModule from '@testcontainers/mongodb';
import type * as RedisModule from '@testcontainers/redis';
import type * as Testcontainers from 'testcontainers';

// Where the infrastructure suites find their servers: the environment (`scripts/infra.sh up`,
// CI), else Testcontainers when a Docker engine is reachable (on machines without a registry, the
// images scripts/containers.sh builds: `eval "$(scripts/containers.sh env)"`), else nowhere — and then
// the suite is skipped with one line saying how to enable it, unless REQUIRE_INFRA is set (CI), where
// a missing server is a failure. Ryuk stays off there (its image is on a registry): every suite
// stops what it started.

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

/**
 * The images Testcontainers starts where no container registry is reachable: the ones
 * scripts/containers.sh builds (`RSD_CONTAINER_IMAGES=local`, printed by `scripts/containers.sh env`).
 * Elsewhere the public images below.
 */
export const LOCAL_IMAGES = {
  kafka: 'localhost/rsd-kafka:3.9.1',
  mongo: 'localhost/rsd-ferretdb:1.24',
  redis: 'localhost/rsd-redis:bookworm',
} as const;

const localImages = () => process.env.RSD_CONTAINER_IMAGES === 'local';

// Loaded when a suite starts a container, not with the test kit that every test imports (half a
// second each). Node's require: jest's CommonJS runtime cannot run `import()` without
// --experimental-vm-modules.
const load = createRequire(__filename);
const testcontainers = () => load('testcontainers') as typeof Testcontainers;

/** Starts (or, from the environment, just names) the server a suite needs. */
export async function startInfra(kind: InfraKind, target: InfraTarget): Promise<StartedServer> {
  if (target.source === 'env') return { url: target.url, stop: () => Promise.resolve() };
  const started = performance.now();
  const server = localImages() ? await startLocalImage(kind) : await startPublicImage(kind);
  process.stderr.write(
    `[infra] testcontainers: ${kind} from ${localImages() ? LOCAL_IMAGES[kind] : 'the public image'} at ${server.url} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return server;
}

async function startPublicImage(kind: InfraKind): Promise<StartedServer> {
  switch (kind) {
    case 'kafka': {
      const { KafkaContainer } = load('@testcontainers/kafka') as typeof KafkaModule;
      const container = await new KafkaContainer('confluentinc/cp-kafka:7.9.0').withKraft().start();
      return { url: `${container.getHost()}:${container.getMappedPort(9093)}`, stop: async () => void (await container.stop()) };
    }
    case 'mongo': {
      const { MongoDBContainer } = load('@testcontainers/mongodb') as typeof MongoDBModule;
      const container = await new MongoDBContainer('mongo:7.0').start();
      return { url: `${container.getConnectionString()}/?directConnection=true`, stop: async () => void (await container.stop()) };
    }
    case 'redis': {
      const { RedisContainer } = load('@testcontainers/redis') as typeof RedisModule;
      const container = await new RedisContainer('redis:7.4').start();
      return { url: container.getConnectionUrl(), stop: async () => void (await container.stop()) };
    }
  }
}

/**
 * The local images. Redis through its module (the image answers as the official one does); Kafka and
 * the MongoDB-wire server as generic containers, because their modules only drive the images they
 * were written for: KafkaContainer runs Confluent's start script (/etc/confluent/docker/run) and
 * checks the tag as a Confluent Platform version, MongoDBContainer starts a replica set with mongosh.
 */
async function startLocalImage(kind: InfraKind): Promise<StartedServer> {
  const { GenericContainer, Wait } = testcontainers();
  switch (kind) {
    case 'kafka':
      return startLocalKafka();
    case 'mongo': {
      const container = await new GenericContainer(LOCAL_IMAGES.mongo)
        .withExposedPorts(27017)
        .withWaitStrategy(Wait.forLogMessage('MongoDB-wire server ready'))
        .withStartupTimeout(120_000)
        .start();
      return {
        url: `mongodb://${container.getHost()}:${container.getMappedPort(27017)}/`,
        stop: async () => void (await container.stop()),
      };
    }
    case 'redis': {
      const { RedisContainer } = load('@testcontainers/redis') as typeof RedisModule;
      const container = await new RedisContainer(LOCAL_IMAGES.redis).start();
      return { url: container.getConnectionUrl(), stop: async () => void (await container.stop()) };
    }
  }
}

/**
 * Kafka must advertise the host port its listener is published on, which is known only once the
 * container runs: as KafkaContainer does, the container waits for a start script, and the script
 * copied in names the mapped port. Clients use PLAINTEXT (published); the broker talks to itself on
 * BROKER, inside the container. The topic settings are scripts/infra.sh's: no auto-creation.
 */
async function startLocalKafka(): Promise<StartedServer> {
  const { GenericContainer, Wait } = testcontainers();
  const script = '/tmp/rsd-start.sh';
  const container = await new GenericContainer(LOCAL_IMAGES.kafka)
    .withExposedPorts(9092)
    .withEnvironment({
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,BROKER://:9094,CONTROLLER://:9093',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'BROKER',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
      KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: '1',
      KAFKA_HEAP_OPTS: '-Xms256m -Xmx512m',
    })
    .withEntrypoint(['bash', '-c'])
    .withCommand([`echo 'waiting for ${script}'; while [ ! -f ${script} ]; do sleep 0.1; done; exec bash ${script}`])
    .withWaitStrategy(Wait.forLogMessage(`waiting for ${script}`))
    .start();
  const url = `${container.getHost()}:${container.getMappedPort(9092)}`;
  const stop = async () => void (await container.stop());
  try {
    await container.copyContentToContainer([
      { content: `export KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://${url},BROKER://localhost:9094\nexec /opt/kafka/run\n`, target: script },
    ]);
    await logLine(await container.logs(), 'Kafka Server started', 120_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}

/** Resolves when a line containing `text` comes through a container's log stream; the stream is closed after. */
function logLine(stream: NodeJS.ReadableStream & { destroy(): void }, text: string, timeoutMs: number): Promise<void> {
  return new Promise((done, fail) => {
    let seen = '';
    const finish = (error?: Error) => {
      clearTimeout(timer);
      stream.removeAllListeners('data');
      stream.destroy();
      if (error) fail(error);
      else done();
    };
    const timer = setTimeout(
      () => finish(new Error(`no "${text}" in the container's log within ${timeoutMs} ms:\n${seen.slice(-2000)}`)),
      timeoutMs,
    );
    stream.on('data', (chunk: Buffer | string) => {
      seen += chunk.toString();
      if (seen.includes(text)) finish();
    });
    stream.on('error', (error: Error) => finish(error));
  });
}
