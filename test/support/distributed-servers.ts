import { MongoClient } from 'mongodb';
import { startInfra, type InfraKind, type InfraTarget, type StartedServer } from '@rsd/testkit';

/** The environment's server when it names one, else a container: the suite's describeWithInfra has already decided on Kafka. */
const fromEnvironmentOrContainer = (url: string | undefined): InfraTarget => (url ? { source: 'env', url } : { source: 'testcontainers' });

/**
 * The servers the distributed runtime runs on: Kafka from the suite's target, MongoDB-wire from
 * MONGO_URL and Redis from REDIS_URL (else containers). Each is added to `servers` as soon as it runs,
 * so the suite's afterAll stops whatever started even if a later one fails. Returns what every
 * service process needs to reach them.
 */
export async function startDistributedServers(
  kafka: InfraTarget,
  servers: StartedServer[],
): Promise<{ RUNTIME: 'distributed'; KAFKA_BROKERS: string; MONGO_URL: string; REDIS_URL: string }> {
  const start = async (kind: InfraKind, target: InfraTarget) => {
    const server = await startInfra(kind, target);
    servers.push(server);
    return server.url;
  };
  const kafkaBrokers = await start('kafka', kafka);
  const mongoUrl = await start('mongo', fromEnvironmentOrContainer(process.env.MONGO_URL));
  const redisUrl = await start('redis', fromEnvironmentOrContainer(process.env.REDIS_URL));
  return { RUNTIME: 'distributed', KAFKA_BROKERS: kafkaBrokers, MONGO_URL: mongoUrl, REDIS_URL: redisUrl };
}

/** Drops a suite's databases on the MongoDB-wire server it used (its afterAll). */
export async function dropDatabases(mongoUrl: string, names: readonly string[]): Promise<void> {
  const client = await MongoClient.connect(mongoUrl);
  try {
    for (const name of names) await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}
