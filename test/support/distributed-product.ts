import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { TOPICS } from '@rsd/contracts';
import type { InfraTarget, StartedServer } from '@rsd/testkit';
import { startDistributedServers } from './distributed-servers';
import { kafkaSecurityFromEnvironment } from './clustered-engines';
import { startService, TEST_RESPONSE_SIGNING_KEYS, type ServiceProcess } from './service-process';

/** The four services of a running product, as a suite that only talks to it over HTTP sees them. */
export interface DistributedProduct {
  urls: { readApi: string; credentials: string; scoreIngest: string; notifier: string };
  /** The HS256 secret the credentials service and score ingest verify tokens with. */
  jwtSecret: string;
  /** Everything each process wrote so far. */
  outputs(): string[];
  /**
   * Stops the processes, drops the run's databases, deletes the score topic's records up to its end (see
   * truncateScores) and stops any server started for it.
   */
  stop(): Promise<void>;
}

/** A port nothing listens on right now, on loopback. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * The distributed runtime as an operator runs it: credentials, score ingest, the read API and the
 * notifier as four processes (`services/<name>/dist/main.js`) on real Kafka, a MongoDB-wire server and
 * Redis (scripts/infra.sh's, from KAFKA_BROKERS, MONGO_URL and REDIS_URL, else containers), on free
 * loopback ports and databases of their own. `env` is added to every process's environment (limits,
 * development flags). Whatever started is stopped again if a later step fails.
 */
export async function startDistributedProduct(kafka: InfraTarget, env: Record<string, string> = {}): Promise<DistributedProduct> {
  const runId = randomUUID().slice(0, 8);
  const servers: StartedServer[] = [];
  const services: ServiceProcess[] = [];
  const databases = [`sdk_credentials_${runId}`, `sdk_views_${runId}`, `sdk_notifier_${runId}`];
  const jwtSecret = randomBytes(32).toString('base64url');
  let mongoUrl = '';
  let kafkaBrokers = '';

  const stop = async () => {
    for (const service of [...services].reverse()) await service.stop();
    if (kafkaBrokers) await truncateScores(kafkaBrokers);
    if (mongoUrl) {
      const client = await MongoClient.connect(mongoUrl);
      for (const name of databases) await client.db(name).dropDatabase();
      await client.close();
    }
    for (const server of servers) await server.stop();
  };

  try {
    const infra = await startDistributedServers(kafka, servers);
    mongoUrl = infra.MONGO_URL;
    kafkaBrokers = infra.KAFKA_BROKERS;
    const [credentialsPort, scoreIngestPort, readApiPort, notifierPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const common = {
      ...infra,
      CREDENTIALS_DB: databases[0]!,
      READ_VIEWS_DB: databases[1]!,
      NOTIFIER_DB: databases[2]!,
      JWT_HS256_SECRET: jwtSecret,
      RESPONSE_SIGNING_KEYS: TEST_RESPONSE_SIGNING_KEYS,
      LOG_LEVEL: 'info',
      KAFKA_TOPIC_PARTITIONS: '3',
      CREDENTIALS_PORT: String(credentialsPort),
      SCORE_INGEST_PORT: String(scoreIngestPort),
      READ_API_PORT: String(readApiPort),
      NOTIFIER_PORT: String(notifierPort),
      // Every request of a suite comes from 127.0.0.1, and polling for a projection counts as failed authentication.
      FAILED_AUTH_LIMIT_PER_MINUTE: '100000',
      OUTBOX_RELAY_INTERVAL_MS: '500',
      EVENT_LOG_PUBLISH_DEADLINE_MS: '2000',
      ...env,
    };
    const start = async (name: string, port: number, extra: Record<string, string> = {}) => {
      const service = await startService(name, port, { ...common, ...extra });
      services.push(service);
      return service;
    };
    const credentials = await start('credentials', credentialsPort);
    const scoreIngest = await start('score-ingest', scoreIngestPort);
    const readApi = await start('read-api', readApiPort, { REPLICA_ID: `sdk-${runId}` });
    // Only the notifier holds the key that seals webhook secrets.
    const notifier = await start('notifier', notifierPort, { WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64') });
    return {
      urls: { readApi: readApi.url, credentials: credentials.url, scoreIngest: scoreIngest.url, notifier: notifier.url },
      jwtSecret,
      outputs: () => services.map((service) => service.output()),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Deletes every record of the score topic up to its current end. A suite that publishes tens of thousands
 * of scores would otherwise leave them to every later read API and notifier started on the same Kafka,
 * which replay the topic from its start on a new database before they are ready (minutes, for a notifier).
 * Runs after the suite's own processes are stopped; earlier suites' records go too, which is harmless
 * because each suite reads only what it published itself (the distributed project runs one file at a time).
 */
export async function truncateScores(brokers: string): Promise<void> {
  const admin = new Kafka({
    brokers: brokers.split(','),
    clientId: `sdk-truncate-${randomUUID().slice(0, 8)}`,
    logLevel: logLevel.NOTHING,
    ...kafkaSecurityFromEnvironment(),
  }).admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(TOPICS.scores);
    await admin.deleteTopicRecords({
      topic: TOPICS.scores,
      partitions: offsets.map(({ partition, high }) => ({ partition, offset: high })),
    });
  } finally {
    await admin.disconnect();
  }
}
