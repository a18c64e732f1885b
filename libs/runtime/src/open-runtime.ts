import { join } from 'node:path';
import type { Db, MongoClient } from 'mongodb';
import { context, trace } from '@opentelemetry/api';
import type * as OtelCore from '@opentelemetry/core';
import { ACCESS_LOG_TOPIC, PURGES_TOPIC, TOPICS } from '@rsd/contracts';
import type { ReadinessCheck } from '@rsd/ports';
import { openRecord, sealingEventLog } from '@rsd/consumers';
import {
  ConfigError,
  SUBJECT_KEYS_MASTER_KEY_SECRET,
  subjectCipher,
  subjectKeysMasterKey,
  type Logger,
  type SubjectCipher,
} from '@rsd/platform';
import type { AccessLog, AccessLogStore, EventLog, Runtime, SubjectKeyStore, ViewStore, Views, ViewsOwner } from '@rsd/ports';
import type { RedisConnection } from '@rsd/redis';
import { accessLogProjection, accessRecordsOf } from './access-log-projection';
import { engineRefusal } from './engine-refusal';
import { loadOrCreateSecretFile } from './secrets';
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
  config: Pick<RuntimeConfig, 'DATA_DIR' | 'READ_VIEWS_DB' | 'NOTIFIER_DB'> &
    Partial<Pick<RuntimeConfig, 'subjectKeysMasterKey' | 'subjectKeysPreviousMasterKey'>>,
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
    openSqliteViewStore,
    openSqliteWebhookStore,
    SUBJECT_KEYS_DATABASE,
  } = adapters;
  // One database file, and one connection in the process, for the log, the authorizations, the views and
  // the webhooks: one transaction per turn of the event loop for all of them (libs/embedded/src/sqlite/database.ts).
  const file = join(config.DATA_DIR, EMBEDDED_DATABASE);
  await importEarlierData({ dataDir: config.DATA_DIR, file, log: log.child({ component: 'import' }) });
  // Decision 56: the subjects' keys in a database of their own beside the log's (never in `rsd backup`'s
  // archive of it), wrapped by the master key: SUBJECT_KEYS_MASTER_KEY, else its file in DATA_DIR.
  const subjectKeys = openSqliteSubjectKeyStore({ file: join(config.DATA_DIR, SUBJECT_KEYS_DATABASE) });
  const cipher = subjectCipher({
    store: subjectKeys,
    masterKey: config.subjectKeysMasterKey ?? (await embeddedMasterKey(config.DATA_DIR, log)),
    ...(config.subjectKeysPreviousMasterKey ? { previousMasterKey: config.subjectKeysPreviousMasterKey } : {}),
  });
  // Sealed as they are appended, opened once for every subscription as they are read.
  const eventLog = sealingEventLog(
    openSqliteEventLog({ file, log: log.child({ component: 'event-log' }), open: (record) => openRecord(record, cipher) }),
    cipher,
  );
  const opened: { close(): Promise<void> }[] = [];
  const rateLimitStores = createMemoryRateLimitStores();
  let accessLog: Promise<AccessLog> | undefined;
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
    // The cipher's own store (closed with the runtime), which `rsd backup` does not copy with the log.
    openSubjectKeyStore: () => Promise.resolve(forgettingDestroyed(subjectKeys, cipher)),
    subjectKeyWrapping: cipher.wrapping,
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
      await subjectKeys.close();
    },
  };
  return runtime;
}

/** The embedded runtime's master key: its file in DATA_DIR, made on the first start (mode 0600, not a database: no backup carries it). */
async function embeddedMasterKey(dataDir: string, log: Logger): Promise<Buffer> {
  const secret = await loadOrCreateSecretFile(dataDir, SUBJECT_KEYS_MASTER_KEY_SECRET);
  if (secret.created) {
    log.info({ file: SUBJECT_KEYS_MASTER_KEY_SECRET.file }, `generated ${SUBJECT_KEYS_MASTER_KEY_SECRET.variable} into the data directory`);
  }
  return subjectKeysMasterKey({ [SUBJECT_KEYS_MASTER_KEY_SECRET.variable]: secret.value });
}

async function openDistributed(config: RuntimeConfig, service: string, log: Logger): Promise<OpenedRuntime> {
  const { openKafkaEventLog } = await import('@rsd/kafka');
  // The event log's and the access log's: the Kafka adapter names its own components (kafka-event-log, kafkajs), so a `component` bound here would repeat.
  const kafka = { brokers: config.KAFKA_BROKERS, clientId: service, log, kafka: config.engines.kafka };
  const kafkaLog = await openKafkaEventLog({
    ...kafka,
    topics: {
      names: [...Object.values(TOPICS), PURGES_TOPIC],
      partitions: config.KAFKA_TOPIC_PARTITIONS,
      replicationFactor: config.KAFKA_REPLICATION_FACTOR,
    },
  });
  const masterKey = config.subjectKeysMasterKey;
  if (!masterKey) throw new ConfigError(['SUBJECT_KEYS_MASTER_KEY: is required when RUNTIME=distributed']);
  let mongo: MongoClient | undefined;
  let redis: { client: RedisConnection; close(): Promise<void> } | undefined;
  let accessLog: Promise<AccessLog & { close(): Promise<void> }> | undefined;
  const checks: ReadinessCheck[] = [{ name: 'kafka', check: () => kafkaLog.ping() }];

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

  // Decision 56: the subjects' keys in a database of their own, opened at the first seal or opening.
  const subjectKeys = lazily(async () => {
    const { openMongoSubjectKeyStore } = await import('@rsd/mongo');
    return openMongoSubjectKeyStore(await database(config.SUBJECT_KEYS_DB));
  });
  const cipher = subjectCipher({
    store: lazySubjectKeyStore(subjectKeys),
    masterKey,
    ...(config.subjectKeysPreviousMasterKey ? { previousMasterKey: config.subjectKeysPreviousMasterKey } : {}),
  });
  const eventLog = sealingEventLog(kafkaLog, cipher);

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
    // The cipher's own store (closed with the runtime).
    openSubjectKeyStore: async () => forgettingDestroyed(await subjectKeys.get(), cipher),
    subjectKeyWrapping: cipher.wrapping,
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
    consumerLag: (groupId) => kafkaLog.lag(groupId),
    openAccessLog: ({ retentionDays }) => {
      accessLog ??= (async () => {
        const { openKafkaAccessLog } = await import('@rsd/kafka');
        const stream = await openKafkaAccessLog({
          ...kafka,
          layout: { partitions: config.KAFKA_TOPIC_PARTITIONS, replicationFactor: config.KAFKA_REPLICATION_FACTOR },
          retentionDays,
          cipher,
        });
        const streamLog = log.child({ component: 'access-log' });
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
            kafkaLog.subscribe({
              groupId: `credentials-access-log.${config.CREDENTIALS_DB}`,
              topics: [ACCESS_LOG_TOPIC],
              fromBeginning: false,
              handle: accessLogProjection(await openStore(), grants, cipher, streamLog),
            }),
          // Decision 44's alerts: a group of their own, from the end like the store's; a message that is not a batch is passed by (and logged).
          watch: (observe) =>
            kafkaLog.subscribe({
              groupId: `credentials-alerts.${config.CREDENTIALS_DB}`,
              topics: [ACCESS_LOG_TOPIC],
              fromBeginning: false,
              handle: async (record) => {
                const batch = await accessRecordsOf(record, cipher, streamLog);
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
      await (await subjectKeys.opened())?.close();
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

/** Opens once, at the first call; a failed opening is not kept (the next call tries again). */
function lazily<T>(open: () => Promise<T>): { get(): Promise<T>; opened(): Promise<T | undefined> } {
  let opening: Promise<T> | undefined;
  return {
    get: () => {
      opening ??= open();
      opening.catch(() => (opening = undefined));
      return opening;
    },
    opened: async () => opening?.catch(() => undefined),
  };
}

/**
 * The runtime's key store as the services see it: the cipher's own, so that a key destroyed in this
 * process stops opening here at once (other processes forget it on the erasure event, or within the
 * cipher's TTL); closed with the runtime, not by a service.
 */
function forgettingDestroyed(store: SubjectKeyStore, cipher: Pick<SubjectCipher, 'forget'>): SubjectKeyStore {
  return {
    getOrCreate: (subject, candidate) => store.getOrCreate(subject, candidate),
    read: (subject) => store.read(subject),
    destroy: async (subject, at) => {
      const destroyed = await store.destroy(subject, at);
      cipher.forget(subject);
      return destroyed;
    },
    list: (after, limit) => store.list(after, limit),
    rewrap: async (subject, from, to) => {
      const rewrapped = await store.rewrap(subject, from, to);
      cipher.forget(subject);
      return rewrapped;
    },
    close: () => Promise.resolve(),
  };
}

/**
 * A key store opened at its first use (the distributed runtime's, in MongoDB). Its calls are not traced:
 * the first one of a process that keeps nothing else in MongoDB (score ingest) opens its connection
 * inside a request's trace, whose handshake (`saslStart`) would be a span of that trace; and a key is
 * read once per subject per 30 s, an internal step of sealing, not the request's work.
 */
function lazySubjectKeyStore(store: { get(): Promise<SubjectKeyStore> }): SubjectKeyStore {
  const untraced = async <T>(call: (opened: SubjectKeyStore) => Promise<T>): Promise<T> => {
    // With no span active (always so when tracing is off) there is no trace to keep the calls out of, and
    // the SDK's core module stays unloaded (decision 39); with tracing on, the SDK has loaded it already.
    if (trace.getActiveSpan() === undefined) return call(await store.get());
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only under an active span (decision 39: no cost when off)
    const { suppressTracing } = require('@opentelemetry/core') as typeof OtelCore;
    return context.with(suppressTracing(context.active()), async () => call(await store.get()));
  };
  return {
    getOrCreate: (subject, candidate) => untraced((opened) => opened.getOrCreate(subject, candidate)),
    read: (subject) => untraced((opened) => opened.read(subject)),
    destroy: (subject, at) => untraced((opened) => opened.destroy(subject, at)),
    list: (after, limit) => untraced((opened) => opened.list(after, limit)),
    rewrap: (subject, from, to) => untraced((opened) => opened.rewrap(subject, from, to)),
    close: () => Promise.resolve(),
  };
}
