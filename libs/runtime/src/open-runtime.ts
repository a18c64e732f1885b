import { join } from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import { TOPICS } from '@rsd/contracts';
import { createMemoryViewStore, memoryRateLimitStores, openFileAuthorizationStore, openFileEventLog } from '@rsd/embedded';
import { openKafkaEventLog } from '@rsd/kafka';
import { openMongoAuthorizationStore, openMongoViewStore, pingMongo } from '@rsd/mongo';
import type { ViewDefinition } from '@rsd/domain';
import type { ReadinessCheck } from '@rsd/observability';
import type { Logger } from '@rsd/platform';
import type { AuthorizationStore, EventLog, RateLimitStoreFactory, ViewStore } from '@rsd/ports';
import { closeRedisClient, createRedisClient, redisRateLimitStores, withLocalFallback } from '@rsd/redis';
import type { RuntimeConfig, RuntimeKind } from './runtime-config';

/** The adapters a service runs on, whichever runtime was chosen. Opened lazily: a service asks only for what it uses. */
export interface Runtime {
  kind: RuntimeKind;
  eventLog: EventLog;
  openAuthorizationStore(): Promise<AuthorizationStore>;
  /** The store of the given views; the embedded one lives in memory and is rebuilt from the log at every start. */
  openViewStore(views: readonly ViewDefinition<unknown>[]): Promise<ViewStore>;
  /** `onFallback` is told when the shared store is lost and regained (distributed only). */
  rateLimitStores(onFallback?: (active: boolean) => void): RateLimitStoreFactory;
  /** Dependencies that must answer before the service takes traffic. */
  readiness(): ReadinessCheck[];
  /** Records a consumer group has not handled yet; undefined where the log has no such notion. */
  consumerLag(groupId: string): Promise<number | undefined>;
  close(): Promise<void>;
}

export async function openRuntime(config: RuntimeConfig, service: string, log: Logger): Promise<Runtime> {
  return config.RUNTIME === 'distributed' ? openDistributed(config, service, log) : openEmbedded(config, log);
}

async function openEmbedded(config: RuntimeConfig, log: Logger): Promise<Runtime> {
  const eventLog = await openFileEventLog({ file: join(config.DATA_DIR, 'events.ndjson'), log: log.child({ component: 'event-log' }) });
  const opened: { close(): Promise<void> }[] = [];
  return {
    kind: 'embedded',
    eventLog,
    openAuthorizationStore: async () => {
      const store = await openFileAuthorizationStore({ file: join(config.DATA_DIR, 'authorizations.json') });
      opened.push(store);
      return store;
    },
    openViewStore: () => Promise.resolve(createMemoryViewStore()),
    rateLimitStores: () => memoryRateLimitStores,
    readiness: () => [],
    consumerLag: () => Promise.resolve(undefined),
    close: async () => {
      for (const resource of opened) await resource.close();
      await eventLog.close();
    },
  };
}

async function openDistributed(config: RuntimeConfig, service: string, log: Logger): Promise<Runtime> {
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
  let redis: ReturnType<typeof createRedisClient> | undefined;
  const checks: ReadinessCheck[] = [{ name: 'kafka', check: () => eventLog.ping() }];

  const database = async (name: string): Promise<Db> => {
    if (!mongo) {
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
    kind: 'distributed',
    eventLog,
    openAuthorizationStore: async () => openMongoAuthorizationStore(await database(config.CREDENTIALS_DB)),
    openViewStore: async (views) => openMongoViewStore(await database(config.READ_VIEWS_DB), views),
    rateLimitStores: (onFallback) => {
      if (!redis) {
        // Redis is not added to `checks`: without it each replica limits on its own (withLocalFallback),
        // and failing readiness would take every replica out of service at once.
        redis = createRedisClient(required(config.REDIS_URL, 'REDIS_URL'), log);
      }
      return withLocalFallback(redisRateLimitStores(redis), memoryRateLimitStores, {
        log: log.child({ component: 'rate-limit' }),
        ...(onFallback ? { onFallback } : {}),
      });
    },
    readiness: () => checks,
    consumerLag: (groupId) => eventLog.lag(groupId),
    close: async () => {
      await eventLog.close();
      await mongo?.close();
      if (redis) await closeRedisClient(redis);
    },
  };
}

function required(value: string | undefined, name: string): string {
  if (!value) throw new Error(`${name} is required when RUNTIME=distributed`);
  return value;
}
