import type { Collection } from 'mongodb';
import { noRewrites, probingCipher, rewrittenValue, type EventCipher, type RewriteCounts } from '@rsd/consumers';
import { TOPICS } from '@rsd/contracts';
import type { TopicRewriteJournal, TopicRewriteReport, TopicRewriteState } from '@rsd/kafka';
import { ConfigError, SealedValueError, SUBJECT_KEYS_MASTER_KEY, subjectCipher, type Logger } from '@rsd/platform';
import type { RuntimeConfig } from './runtime-config';

/** The collection of the key store's database where a rewrite keeps how far it went, one document per topic, removed when done. */
export const LOG_REWRITES_COLLECTION = 'log_rewrites';

export interface SealDistributedLogOptions {
  /** The topics to rewrite, the dead letters' among them (tests: topics of their own); default the product's (TOPICS). */
  topics?: { names: readonly string[]; deadLetter: string };
  progress?: (line: string) => void;
  /** Tests: stop as a crash would right after this step of the first topic rewritten. */
  crashAfter?: 'copied' | 'deleted';
}

/** The adapters the rewrite uses, loaded when it runs (main), or given (a test, which cannot import dynamically). */
export interface SealLogAdapters {
  kafka: typeof import('@rsd/kafka');
  mongo: typeof import('@rsd/mongo');
  mongodb: typeof import('mongodb');
}

export interface SealDistributedLogReport {
  topics: (Omit<TopicRewriteReport, 'outcomes'> & { outcomes: RewriteCounts })[];
  seconds: number;
}

/**
 * `npm run seal-log` (decision 56): each topic of the distributed log written before sealing (the
 * product's: authorizations, scores, webhook changes, dead letters; not the access log's) rewritten
 * with its events sealed, by `rewriteTopic` (a staging copy, the topic recreated, the groups'
 * positions translated), the product stopped. The keys are the product's (SUBJECT_KEYS_DB, wrapped
 * by SUBJECT_KEYS_MASTER_KEY), and the rewrite's progress is kept in the same database
 * (`log_rewrites`), so a new run takes it up. A topic with nothing to seal is left alone: a second
 * run changes nothing.
 */
export async function sealDistributedLog(
  config: RuntimeConfig,
  log: Logger,
  options: SealDistributedLogOptions = {},
  adapters?: SealLogAdapters,
): Promise<SealDistributedLogReport> {
  const started = Date.now();
  const masterKey = config.subjectKeysMasterKey;
  if (!masterKey) throw new ConfigError([`${SUBJECT_KEYS_MASTER_KEY}: is required to seal the log (the services' own)`]);
  if (!config.MONGO_URL) throw new ConfigError(['MONGO_URL: is required to seal the log (the subjects’ keys are in MongoDB)']);
  const topics = options.topics ?? { names: Object.values(TOPICS), deadLetter: TOPICS.deadLetter };
  const {
    kafka: kafkaAdapters,
    mongo: mongoAdapters,
    mongodb,
  } = adapters ?? {
    kafka: await import('@rsd/kafka'),
    mongo: await import('@rsd/mongo'),
    mongodb: await import('mongodb'),
  };
  const { createKafkaClient, rewriteTopic } = kafkaAdapters;
  const mongo = await mongodb.MongoClient.connect(config.MONGO_URL, {
    serverSelectionTimeoutMS: 5_000,
    appName: 'rsd-seal-log',
    ...config.engines.mongo,
  });
  // A batch tool: a broker may take longer than a request's 2 s to acknowledge a large batch.
  const { kafka } = createKafkaClient({
    clientId: 'rsd-seal-log',
    brokers: config.KAFKA_BROKERS,
    log,
    kafka: { ...config.engines.kafka, requestTimeout: 30_000, retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 5_000 } },
  });
  const admin = kafka.admin();
  const keysDb = mongo.db(config.SUBJECT_KEYS_DB);
  const store = await mongoAdapters.openMongoSubjectKeyStore(keysDb);
  try {
    await admin.connect();
    const cipher = subjectCipher({ store, masterKey });
    const journal = mongoJournal(keysDb.collection<TopicRewriteState & { _id: string }>(LOG_REWRITES_COLLECTION));
    const reports: SealDistributedLogReport['topics'] = [];
    for (const topic of topics.names) {
      const deadLetter = topic === topics.deadLetter;
      const report = await rewriteTopic(topic, {
        kafka,
        admin,
        journal,
        rewrite: (value) => sealed(value, cipher, deadLetter),
        probe: (value) => rewrittenValue(value, probingCipher, { deadLetter }),
        ...(options.progress ? { progress: options.progress } : {}),
        ...(options.crashAfter ? { crashAfter: options.crashAfter } : {}),
      });
      reports.push({ ...report, outcomes: { ...noRewrites(), ...report.outcomes } });
      options.progress?.(`${topic}: ${report.rewritten ? `${report.records} records rewritten` : 'nothing to seal, left alone'}`);
    }
    return { topics: reports, seconds: (Date.now() - started) / 1000 };
  } finally {
    await admin.disconnect();
    await store.close();
    await mongo.close();
  }
}

/** A value sealed; a key the master key does not open is the configuration's fault, said so. */
async function sealed(value: string, cipher: EventCipher, deadLetter: boolean): Promise<{ outcome: string; value: string }> {
  try {
    return await rewrittenValue(value, cipher, { deadLetter });
  } catch (error) {
    if (!(error instanceof SealedValueError)) throw error;
    throw new Error(
      `the key store's key of ${error.subject ?? 'a subject'} does not open (${error.problem}): give ${SUBJECT_KEYS_MASTER_KEY} the services use ` +
        'and their SUBJECT_KEYS_DB; nothing of the topic was deleted',
      { cause: error },
    );
  }
}

function mongoJournal(collection: Collection<TopicRewriteState & { _id: string }>): TopicRewriteJournal {
  return {
    read: async (topic) => {
      const found = await collection.findOne({ _id: topic });
      if (!found) return undefined;
      const { _id, ...state } = found;
      return state;
    },
    write: async (state) => {
      await collection.replaceOne({ _id: state.topic }, state, { upsert: true });
    },
    remove: async (topic) => {
      await collection.deleteOne({ _id: topic });
    },
  };
}
