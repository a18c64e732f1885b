import { join } from 'node:path';
import type { Db, MongoClient } from 'mongodb';
import { ACCESS_LOG_TOPIC, PURGES_TOPIC, TOPICS } from '@rsd/contracts';
import type { ReadinessCheck } from '@rsd/ports';
import { ConfigError, type Logger } from '@rsd/platform';
import type { AccessLog, AccessLogStore, EventLog, Runtime, SubjectKeyStore, ViewStore, Views, ViewsOwner } from '@rsd/ports';
import type { RedisConnection } from '@rsd/redis';
import { accessLogProjection, accessRecordBatchOf } from './access-log-projection';
import { engineRefusal } from './engine-refusal';
import type { RuntimeConfig } from './runtime-config';
import { NEVER_STALE } from './shared-views/feed-staleness';
import { sharedViewReader } from './shared-views/shared-view-reader';

/** The audit view's consumer group; the distributed runtime adds the database it fills (the embedded runtime has one). */
const AUDIT_FEED_GROUP = 'credentials-audit';
const ERASURE_FEED_GROUP = 'credentials-erasure';

/**
 * The runtime as the runner holds it: what the services get, and what only the runner needs to know
 * of it (whether views are in this process, which makes it wait for them before serving; how to close).
 */
export interface OpenedRuntime extends Runtime {
  /** The views are written in this process alone: a service's projections catch up before it serves. */
  viewsInProcess: boolean;
  /** The runtime as one service sees it through another view of the log (its traced one): its views' readers follow that too. */
  withEventLog(eventLog: EventLog): Runtime;
  close(): Promise<void>;
}

/** How long a start waits for Redis's first answer: a refusal comes within a TLS handshake or an AUTH. */
const REDIS_FIRST_CONNECTION_MS = 3_000;

/** The embedded runtime's database, in DATA_DIR. */
export const EMBEDDED_DATABASE = 'rsd.sqlite';

export async function openRuntime(config: RuntimeConfig, service: string, log: Logger): Promise<OpenedRuntime> {
  return config.RUNTIME === 'distributed' ? openDistributed(config, service, log) : openEmbedded(config, log);
}

async function openEmbedded(config: RuntimeConfig, log: Logger): Promise<OpenedRuntime> {
  return embeddedRuntime(await import('@rsd/embedded'), config, log);
}

/**
 * The embedded runtime over the adapters of @rsd/embedded, given already loaded (main loads them
 * lazily; a test that cannot import dynamically passes them in).
 */
export async function embeddedRuntime(
  adapters: typeof import('@rsd/embedded'),
  config: Pick<RuntimeConfig, 'DATA_DIR' | 'READ_VIEWS_DB' | 'NOTIFIER_DB'>,
  log: Logger,
): Promise<OpenedRuntime> {
  const {
    createMemoryRateLimitStores,
    importEarlierData,
    openSqliteAccessLog,
    openSqliteAuditLogStore,
    openSqliteAuthorizationStore,
    openSqliteEventLog,
    openSqliteOffboardingStore,
    openSqliteSubjectKeyStore,
    SUBJECT_KEYS_DATABASE,
    openSqliteViewStore,
    openSqliteWebhookStore,
  } = adapters;
  // One database file, and one connection in the process, for the log, the authorizations, the views and
  // the webhooks: one transaction per turn of the event loop for all of them (libs/embedded/src/sqlite/database.ts).
  const file = join(config.DATA_DIR, EMBEDDED_DATABASE);
  await importEarlierData({ dataDir: config.DATA_DIR, file, log: log.child({ component: 'import' }) });
  const eventLog = openSqliteEventLog({ file, log: log.child({ component: 'event-log' }) });
  const opened: { close(): Promise<void> }[] = [];
  const rateLimitStores = createMemoryRateLimitStores();
  let accessLog: Promise<AccessLog> | undefined;
  let subjectKeys: SubjectKeyStore | undefined;
  const opening = <T extends { close(): Promise<void> }>(resource: T): T => {
    opened.push(resource);
    return resource;
  };
  const inProcess = (store: ViewStore, place: string): Views => ({
    store,
    place,
    groupId: (base) => `${base}.${place}`,
    // This process writes them alone: read as they are, never behind the log.
    reader: () => Promise.resolve({ views: store, staleness: NEVER_STALE, readiness: [], stop: () => Promise.resolve() }),
  });
  const runtime: OpenedRuntime = {
    viewsInProcess: true,
    // Its views are read as they are: nothing of them follows the log.
    withEventLog: (followed) => ({ ...runtime, eventLog: followed }),
    eventLog,
    openAuthorizationStore: () => Promise.resolve(opening(openSqliteAuthorizationStore({ file }))),
    openAuditLogStore: () => Promise.resolve(opening(openSqliteAuditLogStore({ file }))),
    auditFeedGroup: AUDIT_FEED_GROUP,
    openOffboardingStore: () => Promise.resolve(opening(openSqliteOffboardingStore({ file }))),
    // A file of its own, which `rsd backup` does not copy with the log (docs/operators/data-protection.md).
    openSubjectKeyStore: () =>
      Promise.resolve((subjectKeys ??= opening(openSqliteSubjectKeyStore({ file: join(config.DATA_DIR, SUBJECT_KEYS_DATABASE) })))),
    erasureFeedGroup: ERASURE_FEED_GROUP,
    openViews: (owner) => {
      const namespace = placeOf(owner, config);
      return Promise.resolve(inProcess(opening(openSqliteViewStore({ file, namespace })), namespace));
    },
    // One set for the process: the read API and the notifier count a credential's requests together.
    rateLimitStores: () => Promise.resolve(rateLimitStores),
    openWebhookStore: () => Promise.resolve(opening(openSqliteWebhookStore({ file }))),
    readiness: () => [],
    consumerLag: () => Promise.resolve(undefined),
    openAccessLog: () => {
      // A database of its own: its writes never join the event log's commits (docs/decisions/0021-access-log.md).
      accessLog ??= (async () =>
        opening(
          await openSqliteAccessLog({
            file: join(config.DATA_DIR, 'access-log.sqlite'),
            importFrom: join(config.DATA_DIR, 'access-log'),
            log: log.child({ component: 'access-log' }),
          }),
        ))();
      // A failed opening is not kept: the next call tries again.
      accessLog.catch(() => (accessLog = undefined));
      return accessLog;
    },
    close: async () => {
      for (const resource of opened) await resource.close();
      await eventLog.close();
    },
  };
  return runtime;
}

async function openDistributed(config: RuntimeConfig, service: string, log: Logger): Promise<OpenedRuntime> {
  const { openKafkaEventLog } = await import('@rsd/kafka');
  // The event log's and the access log's: the Kafka adapter names its own components (kafka-event-log, kafkajs), so a `component` bound here would repeat.
  const kafka = { brokers: config.KAFKA_BROKERS, clientId: service, log, kafka: config.engines.kafka };
  const eventLog = await openKafkaEventLog({
    ...kafka,
    topics: {
      names: [...Object.values(TOPICS), PURGES_TOPIC],
      partitions: config.KAFKA_TOPIC_PARTITIONS,
      replicationFactor: config.KAFKA_REPLICATION_FACTOR,
    },
  });
  let mongo: MongoClient | undefined;
  let redis: { client: RedisConnection; close(): Promise<void> } | undefined;
  let accessLog: Promise<AccessLog & { close(): Promise<void> }> | undefined;
  let subjectKeys: Promise<SubjectKeyStore> | undefined;
  const checks: ReadinessCheck[] = [{ name: 'kafka', check: () => eventLog.ping() }];

  const database = async (name: string): Promise<Db> => {
    if (!mongo) {
      const { MongoClient } = await import('mongodb');
      const { pingMongo } = await import('@rsd/mongo');
      mongo = await MongoClient.connect(required(config.MONGO_URL, 'MONGO_URL'), {
        serverSelectionTimeoutMS: 5_000,
        appName: service,
        ...config.engines.mongo,
      });
      const client = mongo;
      checks.push({ name: 'mongo', check: () => pingMongo(client.db(name)) });
    }
    return mongo.db(name);
  };

  const viewsFollowing =
    (followed: EventLog): Runtime['openViews'] =>
    async (owner, views) => {
      const name = placeOf(owner, config);
      const { openMongoViewStore } = await import('@rsd/mongo');
      const store = await openMongoViewStore(await database(name), views);
      return {
        store,
        place: name,
        groupId: (base) => `${base}.${name}`,
        // Every replica writes them: each reader keeps a cache that its own change feed corrects.
        reader: (options) => sharedViewReader(store, views, { ...options, eventLog: followed, log }),
      };
    };
  const runtime: OpenedRuntime = {
    viewsInProcess: false,
    withEventLog: (followed) => ({ ...runtime, eventLog: followed, openViews: viewsFollowing(followed) }),
    eventLog,
    openAuthorizationStore: async () => {
      const db = await database(config.CREDENTIALS_DB);
      const { openMongoAuthorizationStore } = await import('@rsd/mongo');
      return openMongoAuthorizationStore(db);
    },
    openAuditLogStore: async () => {
      const db = await database(config.CREDENTIALS_DB);
      const { openMongoAuditLogStore } = await import('@rsd/mongo');
      return openMongoAuditLogStore(db);
    },
    auditFeedGroup: `${AUDIT_FEED_GROUP}.${config.CREDENTIALS_DB}`,
    openOffboardingStore: async () => {
      const db = await database(config.CREDENTIALS_DB);
      const { openMongoOffboardingStore } = await import('@rsd/mongo');
      return openMongoOffboardingStore(db);
    },
    openSubjectKeyStore: () => {
      subjectKeys ??= (async () => {
        const db = await database(config.SUBJECT_KEYS_DB);
        const { openMongoSubjectKeyStore } = await import('@rsd/mongo');
        return openMongoSubjectKeyStore(db);
      })();
      // A failed opening is not kept: the next call tries again.
      subjectKeys.catch(() => (subjectKeys = undefined));
      return subjectKeys;
    },
    erasureFeedGroup: `${ERASURE_FEED_GROUP}.${config.CREDENTIALS_DB}`,
    openViews: viewsFollowing(eventLog),
    openWebhookStore: async () => {
      const db = await database(config.NOTIFIER_DB);
      const { openMongoWebhookStore } = await import('@rsd/mongo');
      const onExpiry = (how: string) => log.info({ expiry: how }, 'webhook store opened');
      return openMongoWebhookStore(db, { onExpiry });
    },
    openLeaseStore: async (owner) => {
      const db = await database(owner === 'notifier' ? config.NOTIFIER_DB : config.CREDENTIALS_DB);
      const { openMongoLeaseStore } = await import('@rsd/mongo');
      return openMongoLeaseStore(db);
    },
    rateLimitStores: async (onFallback) => {
      const {
        closeRedisClient,
        createRedisClient,
        createRedisClusterClient,
        firstClusterConnectionError,
        firstConnectionError,
        redisRateLimitStores,
        withLocalFallback,
      } = await import('@rsd/redis');
      const { memoryRateLimitStores } = await import('@rsd/embedded');
      const clustered = config.REDIS_CLUSTER_NODES.length > 0;
      // A service that does not need Redis (the credentials service's claim attempts) counts per replica
      // without one; a service that needs it has REDIS_URL or REDIS_CLUSTER_NODES, or its configuration
      // was refused at start.
      if (!config.REDIS_URL && !clustered) return memoryRateLimitStores;
      if (!redis) {
        // Redis is not added to `checks`: without it each replica limits on its own (withLocalFallback),
        // and failing readiness would take every replica out of service at once.
        const connection = config.engines.redis;
        let first: Promise<Error | undefined>;
        let client: RedisConnection;
        // A Redis that is away is counted around; one that refuses this process's authority or password ends the start.
        if (clustered) {
          client = createRedisClusterClient(config.REDIS_CLUSTER_NODES, log, { connection });
          first = firstClusterConnectionError(config.REDIS_CLUSTER_NODES, connection, REDIS_FIRST_CONNECTION_MS);
        } else {
          const single = createRedisClient(required(config.REDIS_URL, 'REDIS_URL'), log, { connection });
          first = firstConnectionError(single, REDIS_FIRST_CONNECTION_MS);
          client = single;
        }
        redis = { client, close: () => closeRedisClient(client) };
        const refusal = engineRefusal(await first, 'redis');
        if (refusal) throw refusal;
      }
      return withLocalFallback(redisRateLimitStores(redis.client), memoryRateLimitStores, {
        log: log.child({ component: 'rate-limit' }),
        ...(onFallback ? { onFallback } : {}),
      });
    },
    readiness: () => checks,
    consumerLag: (groupId) => eventLog.lag(groupId),
    openAccessLog: ({ retentionDays }) => {
      accessLog ??= (async () => {
        const { openKafkaAccessLog } = await import('@rsd/kafka');
        const stream = await openKafkaAccessLog({
          ...kafka,
          layout: { partitions: config.KAFKA_TOPIC_PARTITIONS, replicationFactor: config.KAFKA_REPLICATION_FACTOR },
          retentionDays,
        });
        let store: Promise<AccessLogStore> | undefined;
        const openStore = () =>
          (store ??= (async () => {
            const { openMongoAccessLogStore } = await import('@rsd/mongo');
            const onExpiry = (how: string) => log.info({ expiry: how, retentionDays }, 'access-log store opened');
            return openMongoAccessLogStore(await database(config.CREDENTIALS_DB), { retentionDays, onExpiry });
          })());
        return {
          publish: (records) => stream.publish(records),
          openStore,
          // The position belongs to the database the records go to. A new database holds no authorization
          // yet, so nothing published before it existed can be one of its own: it starts at the end.
          follow: async (grants) =>
            eventLog.subscribe({
              groupId: `credentials-access-log.${config.CREDENTIALS_DB}`,
              topics: [ACCESS_LOG_TOPIC],
              fromBeginning: false,
              handle: accessLogProjection(await openStore(), grants, log.child({ component: 'access-log' })),
            }),
          // Decision 44's alerts: a group of their own, from the end like the store's; a message that is not a batch is passed by.
          watch: (observe) =>
            eventLog.subscribe({
              groupId: `credentials-alerts.${config.CREDENTIALS_DB}`,
              topics: [ACCESS_LOG_TOPIC],
              fromBeginning: false,
              handle: async (record) => {
                const batch = accessRecordBatchOf(record.value);
                if (batch) await observe(batch);
              },
            }),
          close: () => stream.close(),
        };
      })();
      // A failed opening (Kafka away at start) is not kept: the next call tries again.
      accessLog.catch(() => (accessLog = undefined));
      return accessLog;
    },
    close: async () => {
      await (await accessLog?.catch(() => undefined))?.close();
      await eventLog.close();
      await mongo?.close();
      await redis?.close();
    },
  };
  return runtime;
}

/** Where an owner's views live: a MongoDB database, or a namespace of the embedded database, of the same name. */
function placeOf(owner: ViewsOwner, config: Pick<RuntimeConfig, 'READ_VIEWS_DB' | 'NOTIFIER_DB'>): string {
  return owner === 'read-views' ? config.READ_VIEWS_DB : config.NOTIFIER_DB;
}

function required(value: string | undefined, name: string): string {
  if (!value) throw new ConfigError([`${name}: is required when RUNTIME=distributed`]);
  return value;
}
