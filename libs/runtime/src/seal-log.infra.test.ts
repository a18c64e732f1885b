import { randomUUID } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import { Kafka } from 'kafkajs';
import * as mongodb from 'mongodb';
import { MongoClient } from 'mongodb';
import { openRecord } from '@rsd/consumers';
import { partitionKeyOf, topicOf, TOPICS, type DomainEvent } from '@rsd/contracts';
import * as kafkaAdapters from '@rsd/kafka';
import * as mongoAdapters from '@rsd/mongo';
import { openMongoSubjectKeyStore } from '@rsd/mongo';
import { createLogger, subjectCipher } from '@rsd/platform';
import { describeWithInfra, eventually } from '@rsd/testkit';
import { clearEventsOf } from '../../embedded/src/testing/clear-data-directory';
import { TEST_SUBJECT_KEYS_MASTER_KEY } from '../../embedded/src/testing/sealed-data-directory';
import { kafkaForSuite } from '../../kafka/src/testing/kafka-for-suite';
import { mongoForSuite } from '../../mongo/src/testing/mongo-for-suite';
import { runtimeConfigSchema } from './runtime-config';
import { LOG_REWRITES_COLLECTION, sealDistributedLog as sealWithAdapters, type SealDistributedLogOptions } from './seal-log';

const RUN = `rsd-seal-log-${randomUUID().slice(0, 8)}`;
const log = createLogger('seal-log', 'silent');
const adapters = { kafka: kafkaAdapters, mongo: mongoAdapters, mongodb };
/** The rewrite with the adapters given: jest cannot import them dynamically. */
const sealDistributedLog = (config: Parameters<typeof sealWithAdapters>[0], logger: typeof log, options: SealDistributedLogOptions) =>
  sealWithAdapters(config, logger, options, adapters);
const PARTITIONS = 3;
/** Offsets taken by an aborted transaction (two records and the marker) before the grant's events: the new topic's offsets differ from the old. */
const GAP = 3;

describeWithInfra('kafka', 'seal-log: a distributed log written before sealing, rewritten sealed (decision 56)', (kafkaTarget) =>
  describeWithInfra('mongo', 'on Kafka and MongoDB', (mongoTarget) => {
    const kafka = kafkaForSuite(kafkaTarget, RUN);
    let mongo: MongoClient;
    const keysDb = `rsd_seal_log_${randomUUID().slice(0, 8)}`;
    // Before mongoForSuite's: jest runs a block's afterAll hooks in their order, and that one closes the client.
    afterAll(() => mongo?.db(keysDb).dropDatabase());
    const mongoServer = mongoForSuite(mongoTarget);
    beforeAll(() => {
      mongo = mongoServer.client();
    });

    const acme = clearEventsOf('acme', 'Clearwater Recipient Ltd', '192.0.2.96/28', '203.0.113.77');
    const globex = clearEventsOf('globex', 'Globex Harbour Recipient', '198.51.100.160/28', '203.0.113.201');
    const readable = [...acme.readable, ...globex.readable];

    const config = () =>
      runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'mongo'] }).parse({
        KAFKA_BROKERS: kafka.brokers().join(','),
        MONGO_URL: mongoServer.url(),
        SUBJECT_KEYS_DB: keysDb,
        SUBJECT_KEYS_MASTER_KEY: TEST_SUBJECT_KEYS_MASTER_KEY.toString('base64'),
      });

    /** Every record of a topic as it is stored (committed): partition, offset, key, headers, timestamp, value. */
    async function rawRecords(topic: string): Promise<{ partition: number; message: KafkaMessage }[]> {
      // Read to each partition's last offset (the aborted transaction of the test is at the start, not the end).
      const lasts = (await kafka.admin().fetchTopicOffsets(topic)).filter(({ low, high }) => Number(high) > Number(low));
      const records: { partition: number; message: KafkaMessage }[] = [];
      if (lasts.length === 0) return records;
      const consumer = new Kafka({ brokers: kafka.brokers(), clientId: RUN, logCreator: () => () => undefined }).consumer({
        groupId: kafka.group('reader'),
      });
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachMessage: ({ partition, message }) => Promise.resolve(void records.push({ partition, message })),
      });
      const reached = () =>
        lasts.every(({ partition, high }) =>
          records.some((record) => record.partition === partition && Number(record.message.offset) === Number(high) - 1),
        );
      await eventually(() => expect(reached()).toBe(true), { timeoutMs: 20_000 });
      await consumer.disconnect();
      return records.sort((a, b) => a.partition - b.partition || Number(a.message.offset) - Number(b.message.offset));
    }
    const valuesOf = (records: { message: KafkaMessage }[]) => records.map(({ message }) => message.value?.toString() ?? '');
    const readableIn = (values: string[]) => readable.filter((needle) => values.some((value) => value.includes(needle)));
    const kept = (records: { partition: number; message: KafkaMessage }[]) =>
      records.map(({ partition, message }) => ({
        partition,
        key: message.key?.toString(),
        timestamp: message.timestamp,
        header: message.headers?.['x-older-build']?.toString(),
      }));

    it('when the log is rewritten across two crashes, then no record holds a name, an address or a score, each opens as written, and a group keeps its place', async () => {
      const topics = {
        authorizations: kafka.topic('authorizations'),
        scores: kafka.topic('scores'),
        deadLetter: kafka.topic('dead-letter'),
      };
      const admin = kafka.admin();
      await admin.createTopics({
        waitForLeaders: true,
        topics: Object.values(topics).map((topic) => ({
          topic,
          numPartitions: PARTITIONS,
          replicationFactor: 1,
          configEntries: [
            { name: 'retention.ms', value: '-1' },
            { name: 'retention.bytes', value: '-1' },
          ],
        })),
      });
      const producer = new Kafka({ brokers: kafka.brokers(), clientId: RUN, logCreator: () => () => undefined }).producer();
      await producer.connect();
      const ourTopic = (event: DomainEvent) => (topicOf(event) === TOPICS.scores ? topics.scores : topics.authorizations);
      const grantKey = partitionKeyOf(acme.grant);
      // A transaction aborted on the grant's partition (its records and its marker): the grant's events start at offset GAP.
      const transactional = new Kafka({ brokers: kafka.brokers(), clientId: RUN, logCreator: () => () => undefined }).producer({
        transactionalId: `${RUN}-gap`,
        maxInFlightRequests: 1,
        idempotent: true,
      });
      await transactional.connect();
      const transaction = await transactional.transaction();
      const [filler] = await transaction.send({
        topic: topics.authorizations,
        messages: Array.from({ length: GAP - 1 }, () => ({ key: grantKey, value: 'aborted' })),
      });
      await transaction.abort();
      await transactional.disconnect();
      const grantPartition = filler!.partition;
      // The coordinator writes the abort marker after it answers: wait for it, or the grant's events could come before it.
      await eventually(async () => {
        const ends = await admin.fetchTopicOffsets(topics.authorizations);
        expect(ends.find(({ partition }) => partition === grantPartition)?.high).toBe(String(GAP));
      });
      let time = 1_700_000_000_000;
      for (const event of [...acme.events, ...globex.events]) {
        await producer.send({
          topic: ourTopic(event),
          messages: [
            {
              key: partitionKeyOf(event),
              value: JSON.stringify(event),
              timestamp: String((time += 1_000)),
              headers: { 'x-older-build': 'kept' },
            },
          ],
        });
      }
      const letter = {
        reason: 'an older rule refused it',
        topic: TOPICS.authorizations,
        partition: 0,
        offset: '1',
        key: 'acme',
        value: JSON.stringify(acme.grant),
      };
      await producer.send({ topic: topics.deadLetter, messages: [{ key: 'acme', value: JSON.stringify(letter) }] });
      await producer.disconnect();
      // A consumer group that read the grant's first event: its next record is the alert, old offset GAP + 1.
      const group = kafka.group('projections');
      await admin.setOffsets({
        groupId: group,
        topic: topics.authorizations,
        partitions: [{ partition: grantPartition, offset: String(GAP + 1) }],
      });

      const before = await rawRecords(topics.authorizations);
      expect(
        readableIn([...valuesOf(before), ...valuesOf(await rawRecords(topics.scores)), ...valuesOf(await rawRecords(topics.deadLetter))]),
      ).toEqual(readable);
      const names = [topics.authorizations, topics.scores, topics.deadLetter];
      const seal = (crashAfter?: 'copied' | 'deleted') =>
        sealDistributedLog(config(), log, { topics: { names, deadLetter: topics.deadLetter }, ...(crashAfter ? { crashAfter } : {}) });

      // A crash once the staging copy is made and checked: the topic is untouched, the copy and its record are there.
      await expect(seal('copied')).rejects.toThrow(/stopped after the staging copy/);
      expect(await admin.listTopics()).toEqual(expect.arrayContaining([topics.authorizations, `${topics.authorizations}.rewriting`]));
      expect(valuesOf(await rawRecords(topics.authorizations))).toEqual(valuesOf(before));
      expect(
        await mongo
          .db(keysDb)
          .collection(LOG_REWRITES_COLLECTION)
          .findOne({ _id: topics.authorizations as never }),
      ).toMatchObject({ step: 'copied' });
      // Another, once the topic is deleted.
      await expect(seal('deleted')).rejects.toThrow(/stopped after deleting the topic/);
      expect(await admin.listTopics()).not.toContain(topics.authorizations);

      const report = await seal();

      expect(report.topics).toEqual([
        expect.objectContaining({
          topic: topics.authorizations,
          rewritten: true,
          resumedAfter: 'copied',
          records: 4,
          outcomes: expect.objectContaining({ sealed: 4 }) as unknown,
          groups: [{ groupId: group, partitions: [{ partition: grantPartition, from: String(GAP + 1), to: '1' }] }],
        }),
        expect.objectContaining({
          topic: topics.scores,
          rewritten: true,
          records: 2,
          outcomes: expect.objectContaining({ sealed: 2 }) as unknown,
        }),
        expect.objectContaining({
          topic: topics.deadLetter,
          rewritten: true,
          records: 1,
          outcomes: expect.objectContaining({ sealed: 1 }) as unknown,
        }),
      ]);
      const after = await rawRecords(topics.authorizations);
      const scores = await rawRecords(topics.scores);
      const letters = await rawRecords(topics.deadLetter);
      expect(readableIn([...valuesOf(after), ...valuesOf(scores), ...valuesOf(letters)])).toEqual([]);
      expect(kept(after)).toEqual(kept(before));
      expect(after.filter(({ partition }) => partition === grantPartition).map(({ message }) => message.offset)[0]).toBe('0');
      const [committed] = await admin.fetchOffsets({ groupId: group, topics: [topics.authorizations] });
      expect(committed!.partitions.find(({ partition }) => partition === grantPartition)?.offset).toBe('1');
      expect((await admin.listTopics()).filter((topic) => topic.endsWith('.rewriting'))).toEqual([]);
      expect(await mongo.db(keysDb).collection(LOG_REWRITES_COLLECTION).countDocuments()).toBe(0);

      const store = await openMongoSubjectKeyStore(mongo.db(keysDb));
      const cipher = subjectCipher({ store, masterKey: TEST_SUBJECT_KEYS_MASTER_KEY });
      const opened = await Promise.all(
        after.map(({ message }) => openRecord({ topic: TOPICS.authorizations, value: message.value!.toString() }, cipher)),
      );
      expect(opened.map(({ parsed }) => parsed)).toEqual(expect.arrayContaining([acme.grant, globex.grant].map((event) => ({ event }))));
      await store.close();

      const again = await seal();
      expect(again.topics.map(({ rewritten, outcomes }) => ({ rewritten, sealed: outcomes.sealed }))).toEqual(
        names.map(() => ({ rewritten: false, sealed: 0 })),
      );
    }, 120_000);

    it('when a topic is missing or a consumer group is running, then it is refused and nothing is changed', async () => {
      const missing = kafka.topic('missing');
      await expect(sealDistributedLog(config(), log, { topics: { names: [missing], deadLetter: missing } })).rejects.toThrow(
        new RegExp(`Kafka topic "${missing}" does not exist: there is nothing to rewrite`),
      );

      const topic = kafka.topic('served');
      const admin = kafka.admin();
      await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] });
      const group = kafka.group('running');
      await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '0' }] });
      const consumer = new Kafka({ brokers: kafka.brokers(), clientId: RUN, logCreator: () => () => undefined }).consumer({
        groupId: group,
      });
      await consumer.connect();
      await consumer.subscribe({ topics: [topic] });
      await consumer.run({ eachMessage: () => Promise.resolve() });
      await eventually(async () => expect((await admin.describeGroups([group])).groups[0]?.members.length).toBe(1), { timeoutMs: 20_000 });

      await expect(sealDistributedLog(config(), log, { topics: { names: [topic], deadLetter: 'none' } })).rejects.toThrow(
        new RegExp(`"${topic}" is being read: consumer group\\(s\\) ${group} \\(1 member\\(s\\)\\) are running`),
      );
      await consumer.disconnect();
    }, 60_000);
  }),
);
