import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { ACCESS_LOG_TOPIC, type AccessRecord } from '@rsd/contracts';
import { openAccessRecords } from '@rsd/consumers';
import { openMongoSubjectKeyStore } from '@rsd/mongo';
import { subjectCipher } from '@rsd/platform';
import { topicMessages } from './leak-search';
import { TEST_SUBJECT_KEYS_MASTER_KEY } from './service-process';

/** What the distributed runtime's access-log topic holds of some grants: its raw records, and the records as the product's keys open them. */
export interface AccessLogTopicRecords {
  raw: string[];
  opened: AccessRecord[];
}

/**
 * Decision 56 on the access-log topic (`rsd.access-log.v1`): the messages that name any of `clientIds`,
 * as stored, and their records of those grants opened with the product's master key and key store (the
 * suites' one `SUBJECT_KEYS_DB`), with no key kept in memory, as a credentials service replaying the
 * topic would read them. A message that does not open fails the search, naming why.
 */
export async function accessLogTopicRecords(env: Record<string, string>, clientIds: readonly string[]): Promise<AccessLogTopicRecords> {
  const { messages } = await topicMessages(env.KAFKA_BROKERS!, `access-log-search-${randomUUID()}`, (topic) => topic === ACCESS_LOG_TOPIC);
  const raw = messages.map(({ value }) => value).filter((value) => clientIds.some((clientId) => value.includes(clientId)));
  const client = await MongoClient.connect(env.MONGO_URL!);
  try {
    const store = await openMongoSubjectKeyStore(client.db(env.SUBJECT_KEYS_DB ?? 'rsd_subject_keys'));
    const cipher = subjectCipher({ store, masterKey: Buffer.from(TEST_SUBJECT_KEYS_MASTER_KEY, 'base64'), cache: { ttlMs: 0 } });
    const opened: AccessRecord[] = [];
    for (const value of raw) {
      const read = await openAccessRecords(value, cipher);
      if (!('records' in read)) throw new Error(`an access-log message of the search does not open: ${read.reason}`);
      opened.push(...read.records.filter((record) => clientIds.includes(record.clientId)));
    }
    return { raw, opened };
  } finally {
    await client.close();
  }
}
