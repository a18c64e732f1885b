import { randomBytes, randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { TOPICS } from '@rsd/contracts';
import { signDevToken } from '@rsd/platform';
import type { InfraTarget, StartedServer } from '@rsd/testkit';
import { dropDatabases, startDistributedServers } from './distributed-servers';
import { kafkaSecurityFromEnvironment } from './clustered-engines';
import { freePort } from './raw-http';
import { startService, TEST_RESPONSE_SIGNING_KEYS, TEST_SUBJECT_KEYS_MASTER_KEY, type ServiceProcess } from './service-process';
import { sharedFixture } from './shared-fixture';

/** The four services of a running product, as a suite that only talks to it over HTTP sees them. */
export interface DistributedProduct {
  urls: { readApi: string; credentials: string; scoreIngest: string; notifier: string };
  /** The HS256 secret the credentials service and score ingest verify tokens with. */
  jwtSecret: string;
  /** The environment every process shares: the servers' addresses and the run's database names (NOTIFIER_DB, …). */
  env: Record<string, string>;
  /** Everything each process wrote so far. */
  outputs(): string[];
  /**
   * Stops the processes, drops the run's databases, deletes the score topic's records up to its end (see
   * truncateScores) and stops any server started for it.
   */
  stop(): Promise<void>;
}

/** Where one suite's product lives: its databases are `<prefix>_credentials_<runId>`, `…_views_…` and `…_notifier_…`. */
export interface ProductLayout {
  prefix: string;
  runId: string;
  jwtSecret: string;
  ports: { credentials: number; scoreIngest: number; readApi?: number; notifier?: number };
}

/**
 * The environment every process of a suite's distributed product shares (the servers' addresses are
 * the caller's to add): its databases and ports, the token secret, and the settings every suite runs
 * with; `settings` last, over them.
 */
export function productEnv(
  { prefix, runId, jwtSecret, ports }: ProductLayout,
  settings: Record<string, string> = {},
): Record<string, string> {
  return {
    CREDENTIALS_DB: `${prefix}_credentials_${runId}`,
    READ_VIEWS_DB: `${prefix}_views_${runId}`,
    NOTIFIER_DB: `${prefix}_notifier_${runId}`,
    // Every process of the product, its one-off tasks (rebuild-views) too, opens what the others sealed; and every
    // suite's product opens what the earlier ones left in the shared topics: one master key, and the keys in the one
    // default SUBJECT_KEYS_DB of every suite, never dropped (keys of its own would make each new read API find every
    // earlier record without a key, and dead-letter them all as it catches up).
    SUBJECT_KEYS_MASTER_KEY: TEST_SUBJECT_KEYS_MASTER_KEY,
    JWT_HS256_SECRET: jwtSecret,
    LOG_LEVEL: 'info',
    KAFKA_TOPIC_PARTITIONS: '3',
    CREDENTIALS_PORT: String(ports.credentials),
    SCORE_INGEST_PORT: String(ports.scoreIngest),
    ...(ports.readApi === undefined ? {} : { READ_API_PORT: String(ports.readApi) }),
    ...(ports.notifier === undefined ? {} : { NOTIFIER_PORT: String(ports.notifier) }),
    // Every request of a suite comes from 127.0.0.1, and polling for a projection counts as failed authentication.
    FAILED_AUTH_LIMIT_PER_MINUTE: '100000',
    OUTBOX_RELAY_INTERVAL_MS: '500',
    ...settings,
  };
}

/** The product's databases, as productEnv names them in `env`. */
export const productDatabases = (env: Record<string, string>): string[] =>
  [env.CREDENTIALS_DB, env.READ_VIEWS_DB, env.NOTIFIER_DB].filter((name) => name !== undefined);

/** A service started and added to `services`. */
export async function startInto(
  services: ServiceProcess[],
  name: string,
  port: number,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const service = await startService(name, port, env);
  services.push(service);
  return service;
}

/**
 * A notifier whose receivers are on loopback (decision 28's development flag), holding the key that
 * seals webhook secrets (a new one unless `webhookSecretKey` is given), added to `services`.
 */
export function startLoopbackNotifier(
  services: ServiceProcess[],
  port: number,
  env: Record<string, string>,
  webhookSecretKey = randomBytes(32).toString('base64'),
): Promise<ServiceProcess> {
  return startInto(services, 'notifier', port, { ...env, WEBHOOK_SECRET_KEY: webhookSecretKey, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
}

/**
 * What the shared scenarios need of a running product: its services' URLs (every read-API replica) and
 * an organization admin's token for any organization, signed with the product's secret.
 */
export function scenarioTarget(
  services: { credentials: ServiceProcess; scoreIngest: ServiceProcess; readApis: readonly ServiceProcess[] },
  jwtSecret: string,
) {
  return {
    credentials: services.credentials.url,
    scoreIngest: services.scoreIngest.url,
    readApis: services.readApis.map((replica) => replica.url),
    tokenFor: (org: string) => signDevToken(jwtSecret, { org, scope: 'authorizations:write scores:write' }),
  };
}

/** Read-API replicas on `ports`, each with its REPLICA_ID, added to `services` as each starts. */
export async function startReadReplicas(
  env: Record<string, string>,
  ports: readonly number[],
  replicaId: (port: number, index: number) => string,
  services: ServiceProcess[],
): Promise<ServiceProcess[]> {
  const replicas: ServiceProcess[] = [];
  for (const [index, port] of ports.entries()) {
    const replica = await startService('read-api', port, { ...env, READ_API_PORT: String(port), REPLICA_ID: replicaId(port, index) });
    services.push(replica);
    replicas.push(replica);
  }
  return replicas;
}

/**
 * A suite's product taken down: `services` stopped, last started first, what each wrote kept in
 * `outputs`; then, when `databasesOf` names a MongoDB server, the product's databases dropped there; then
 * the servers started for it stopped.
 */
export async function stopProduct(
  services: readonly ServiceProcess[],
  outputs: string[],
  servers: readonly StartedServer[],
  databasesOf?: Record<string, string>,
): Promise<void> {
  for (const service of [...services].reverse()) {
    outputs.push(service.output());
    await service.stop();
  }
  if (databasesOf?.MONGO_URL) await dropDatabases(databasesOf.MONGO_URL, productDatabases(databasesOf));
  for (const server of servers) await server.stop();
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
  const jwtSecret = randomBytes(32).toString('base64url');
  let common: Record<string, string> = {};

  const stop = async () => {
    for (const service of [...services].reverse()) await service.stop();
    // On a stack (Compose, Kubernetes) the log is also the stack's own record: its read API has projected these
    // scores, and a rebuild of its views from offset zero must find them again. Elsewhere the suite's Kafka is its own.
    if (common.KAFKA_BROKERS && !process.env.RSD_DISTRIBUTED_STACK) await truncateScores(common.KAFKA_BROKERS);
    await stopProduct([], [], servers, common);
  };

  try {
    const infra = await startDistributedServers(kafka, servers);
    const ports = { credentials: await freePort(), scoreIngest: await freePort(), readApi: await freePort(), notifier: await freePort() };
    common = {
      ...infra,
      ...productEnv(
        { prefix: 'sdk', runId, jwtSecret, ports },
        { RESPONSE_SIGNING_KEYS: TEST_RESPONSE_SIGNING_KEYS, EVENT_LOG_PUBLISH_DEADLINE_MS: '2000', ...env },
      ),
    };
    const start = async (name: string, port: number, extra: Record<string, string> = {}) => {
      const service = await startService(name, port, { ...common, ...extra });
      services.push(service);
      return service;
    };
    const credentials = await start('credentials', ports.credentials);
    const scoreIngest = await start('score-ingest', ports.scoreIngest);
    const readApi = await start('read-api', ports.readApi, { REPLICA_ID: `sdk-${runId}` });
    // Only the notifier holds the key that seals webhook secrets.
    const notifier = await start('notifier', ports.notifier, { WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64') });
    return {
      urls: { readApi: readApi.url, credentials: credentials.url, scoreIngest: scoreIngest.url, notifier: notifier.url },
      jwtSecret,
      env: common,
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

/** The distributed product a describe block's tests share, read inside the tests (it is there once `beforeAll` has run). */
export interface DistributedSuite {
  readonly product: DistributedProduct;
  /** An administrator's token for `org` (both write scopes), signed with the product's secret. */
  tokenFor(org: string): Promise<string>;
}

/**
 * `startDistributedProduct` as a describe block's hooks: started (after `before`, if given) before its
 * tests, stopped after them.
 */
export function distributedSuite(
  kafka: () => InfraTarget,
  env: Record<string, string> = {},
  before: () => Promise<void> = () => Promise.resolve(),
): DistributedSuite {
  const current = sharedFixture(
    () => startDistributedProduct(kafka(), env),
    async (product) => product?.stop(),
    {
      before,
      start: 180_000,
      stop: 60_000,
    },
  );
  return {
    get product() {
      return current();
    },
    tokenFor: (org) => signDevToken(current().jwtSecret, { org, scope: 'authorizations:write scores:write' }),
  };
}
