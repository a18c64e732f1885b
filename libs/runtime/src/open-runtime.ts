import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { Db, MongoClient } from 'mongodb';
import { ACCESS_LOG_TOPIC, TOPICS } from '@rsd/contracts';
import type { ViewDefinition } from '@rsd/domain';
import type { ReadinessCheck } from '@rsd/observability';
import { ConfigError, type Logger } from '@rsd/platform';
import type {
  AccessLog,
  AccessLogOptions,
  AuthorizationStore,
  ConsoleStateStore,
  EventLog,
  RateLimitStoreFactory,
  ViewStore,
  WebhookStore,
} from '@rsd/ports';
import type { RuntimeConfig } from './runtime-config';

/**
 * The adapters a service runs on, whichever runtime was chosen. Opened and loaded lazily: a service
 * asks only for what it uses, and the modules of the adapters it never asks for (the MongoDB and
 * Redis drivers for score ingest, every server's driver for the embedded runtime) are never loaded.
 */
export interface Runtime {
  /**
   * Whether other processes write the same views (the distributed runtime's replicas): a reader that
   * caches them must then follow their change feed, and may fall out of touch with it. Views in this
   * process alone (embedded) are current when read.
   */
  sharedViews: boolean;
  eventLog: EventLog;
  openAuthorizationStore(): Promise<AuthorizationStore>;
  /** The console's sign-in attempts, links and sessions: in memory (one process), or the credentials database (shared by its replicas). */
  openConsoleStateStore(): Promise<ConsoleStateStore>;
  /**
   * The store of the given views, in `database` (default READ_VIEWS_DB): a MongoDB database, or a
   * namespace of the embedded database. Each consumer that keeps views of its own names its own.
   */
  openViewStore(views: readonly ViewDefinition<unknown>[], database?: string): Promise<ViewStore>;
  /** `onFallback` is told when the shared store is lost and regained (distributed only). */
  rateLimitStores(onFallback?: (active: boolean) => void): Promise<RateLimitStoreFactory>;
  /** The notifier's subscriptions, queue and attempts: in the embedded database, or the MongoDB database NOTIFIER_DB. */
  openWebhookStore(): Promise<WebhookStore>;
  /** Dependencies that must answer before the service takes traffic. */
  readiness(): ReadinessCheck[];
  /** Records a consumer group has not handled yet; undefined where the log has no such notion. */
  consumerLag(groupId: string): Promise<number | undefined>;
  /**
   * Decision 21's stream, apart from the event log: a database of its own in DATA_DIR (access-log.sqlite), or a Kafka topic of
   * its own followed into the credentials database. One per process, closed with the runtime: the
   * read API publishes to it and the credentials service reads it, and in one process they share it.
   */
  openAccessLog(options: AccessLogOptions): Promise<AccessLog>;
  close(): Promise<void>;
}

/** The embedded runtime's database, in DATA_DIR. */
export const EMBEDDED_DATABASE = 'rsd.sqlite';

export async function openRuntime(config: RuntimeConfig, service: string, log: Logger): Promise<Runtime> {
  return config.RUNTIME === 'distributed' ? openDistributed(config, service, log) : openEmbedded(config, log);
}

async function openEmbedded(config: RuntimeConfig, log: Logger): Promise<Runtime> {
  return embeddedRuntime(await import('@rsd/embedded'), config, log);
}

/**
 * The embedded runtime over the adapters of @rsd/embedded, given already loaded (main loads them
 * lazily; a test that cannot import dynamically passes them in).
 */
export async function embeddedRuntime(
  adapters: typeof import('@rsd/embedded'),
  config: Pick<RuntimeConfig, 'DATA_DIR' | 'READ_VIEWS_DB'>,
  log: Logger,
): Promise<Runtime> {
  const {
    createMemoryConsoleStateStore,
    createMemoryRateLimitStores,
    importEarlierData,
    openSqliteAccessLog,
    openSqliteAuthorizationStore,
    openSqliteEventLog,
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
  const opening = <T extends { close(): Promise<void> }>(resource: T): T => {
    opened.push(resource);
    return resource;
  };
  return {
    sharedViews: false,
    eventLog,
    openAuthorizationStore: () => Promise.resolve(opening(openSqliteAuthorizationStore({ file }))),
    openConsoleStateStore: () => Promise.resolve(createMemoryConsoleStateStore()),
    openViewStore: (_views, database = config.READ_VIEWS_DB) =>
      Promise.resolve(opening(openSqliteViewStore({ file, namespace: database }))),
    // One set for the process: the read API and the notifier count a credential's requests together.
    rateLimitStores: () => Promise.resolve(rateLimitStores),
    openWebhookStore: () => Promise.resolve(opening(openSqliteWebhookStore({ file }))),
    readiness: () => [],
    consumerLag: () => Promise.resolve(undefined),
    openAccessLog: () => {
      // A database of its own: its writes never join the event log's commits (docs/decisions.md).
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
}

async function openDistributed(config: RuntimeConfig, service: string, log: Logger): Promise<Runtime> {
  const { openKafkaEventLog } = await import('@rsd/kafka');
  const eventLog = await openKafkaEventLog({
    brokers: config.KAFKA_BROKERS,
    clientId: service,
    // The Kafka adapter names its own components (kafka-event-log, kafkajs): a `component` bound here would repeat.
    log,
    topics: {
      names: Object.values(TOPICS),
      partitions: config.KAFKA_TOPIC_PARTITIONS,
      replicationFactor: config.KAFKA_REPLICATION_FACTOR,
    },
  });
  let mongo: MongoClient | undefined;
  let redis: { client: Redis; close(): Promise<void> } | undefined;
  let accessLog: Promise<AccessLog & { close(): Promise<void> }> | undefined;
  const checks: ReadinessCheck[] = [{ name: 'kafka', check: () => eventLog.ping() }];

  const database = async (name: string): Promise<Db> => {
    if (!mongo) {
      const { MongoClient } = await import('mongodb');
      const { pingMongo } = await import('@rsd/mongo');
      mongo = await MongoClient.connect(required(config.MONGO_URL, 'MONGO_URL'), {
        serverSelectionTimeoutMS: 5_000,
        appName: service,
      });
      const client = mongo;
      checks.push({ name: 'mongo', check: () => pingMongo(client.db(name)) });
    }
    return mongo.db(name);
  };

  return {
    sharedViews: true,
    eventLog,
    openAuthorizationStore: async () => {
      const db = await database(config.CREDENTIALS_DB);
      const { openMongoAuthorizationStore } = await import('@rsd/mongo');
      return openMongoAuthorizationStore(db);
    },
    openConsoleStateStore: async () => {
      const db = await database(config.CREDENTIALS_DB);
      const { openMongoConsoleStateStore } = await import('@rsd/mongo');
      return openMongoConsoleStateStore(db);
    },
    openViewStore: async (views, name = config.READ_VIEWS_DB) => {
      const db = await database(name);
      const { openMongoViewStore } = await import('@rsd/mongo');
      return openMongoViewStore(db, views);
    },
    openWebhookStore: async () => {
      const db = await database(config.NOTIFIER_DB);
      const { openMongoWebhookStore } = await import('@rsd/mongo');
      const onExpiry = (how: string) => log.info({ expiry: how }, 'webhook store opened');
      return openMongoWebhookStore(db, { onExpiry });
    },
    rateLimitStores: async (onFallback) => {
      const { closeRedisClient, createRedisClient, redisRateLimitStores, withLocalFallback } = await import('@rsd/redis');
      const { memoryRateLimitStores } = await import('@rsd/embedded');
      // A service that does not need Redis (the credentials service's claim attempts) counts per replica
      // without one; a service that needs it has REDIS_URL, or its configuration was refused at start.
      if (!config.REDIS_URL) return memoryRateLimitStores;
      if (!redis) {
        // Redis is not added to `checks`: without it each replica limits on its own (withLocalFallback),
        // and failing readiness would take every replica out of service at once.
        const client = createRedisClient(required(config.REDIS_URL, 'REDIS_URL'), log);
        redis = { client, close: () => closeRedisClient(client) };
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
          brokers: config.KAFKA_BROKERS,
          clientId: service,
          log,
          layout: { partitions: config.KAFKA_TOPIC_PARTITIONS, replicationFactor: config.KAFKA_REPLICATION_FACTOR },
          retentionDays,
        });
        return {
          publish: (records) => stream.publish(records),
          openStore: async () => {
            const { openMongoAccessLogStore } = await import('@rsd/mongo');
            const onExpiry = (how: string) => log.info({ expiry: how, retentionDays }, 'access-log store opened');
            return openMongoAccessLogStore(await database(config.CREDENTIALS_DB), { retentionDays, onExpiry });
          },
          // The position belongs to the database the records go to. A new database holds no authorization
          // yet, so nothing published before it existed can be one of its own: it starts at the end.
          follow: (handle) =>
            eventLog.subscribe({
              groupId: `credentials-access-log.${config.CREDENTIALS_DB}`,
              topics: [ACCESS_LOG_TOPIC],
              fromBeginning: false,
              handle,
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
}

function required(value: string | undefined, name: string): string {
  if (!value) throw new ConfigError([`${name}: is required when RUNTIME=distributed`]);
  return value;
}
