import { randomBytes, randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { MongoClient } from 'mongodb';
import type { AccessRecord } from '@rsd/contracts';
import { openKafkaAccessLog, openKafkaEventLog, type KafkaAccessLogPublisher, type KafkaEventLog } from '@rsd/kafka';
import { openMongoAccessLogStore, openMongoSubjectKeyStore } from '@rsd/mongo';
import { createLogger, subjectCipher, type SubjectCipher } from '@rsd/platform';
import type { AccessLogStore, SubjectKeyStore, Subscription } from '@rsd/ports';
import { anAccessRecord, aUniqueClientId, describeWithInfra, startInfra, type StartedServer } from '@rsd/testkit';
import { accessLogProjection } from './access-log-projection';

const RUN = `rsd-alseal-${randomUUID().slice(0, 8)}`;
const log = createLogger('runtime', process.env.TEST_LOG_LEVEL ?? 'silent');
const ERASED_AT = '2026-12-03T07:00:00.000Z';

/**
 * Decision 56 on the distributed runtime's access-log topic, on a real Kafka and MongoDB-wire server:
 * the read API's publisher seals each batch's addresses under their grants' keys (the key store in
 * MongoDB), the topic's raw records hold none in clear, and the credentials service's projection opens
 * them into its store, until a grant's key is destroyed (its erasure, or its organization's offboarding):
 * then the topic's records of that grant read with no address, whoever reads them from the start.
 */
describeWithInfra('kafka', 'sealed access-log topic (decision 56)', (kafkaTarget) => {
  describeWithInfra('mongo', 'on MongoDB', (mongoTarget) => {
    const servers: StartedServer[] = [];
    const closing: (() => Promise<unknown>)[] = [];
    let brokers: string[];
    let admin: Admin;
    let mongo: MongoClient;
    let keyStore: SubjectKeyStore;
    const topic = `${RUN}-access-log`;
    const databases = [`${RUN}_keys`, `${RUN}_first`, `${RUN}_replayed`].map((name) => name.replace(/-/g, '_'));
    const masterKey = randomBytes(32);

    beforeAll(async () => {
      const kafka = await startInfra('kafka', kafkaTarget());
      const mongoServer = await startInfra('mongo', mongoTarget());
      servers.push(kafka, mongoServer);
      brokers = kafka.url.split(',');
      admin = new Kafka({ clientId: `${RUN}-admin`, brokers, logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      mongo = await MongoClient.connect(mongoServer.url, { serverSelectionTimeoutMS: 5_000 });
      keyStore = await openMongoSubjectKeyStore(mongo.db(databases[0]));
    }, 120_000);

    afterAll(async () => {
      for (const close of closing.reverse()) await close().catch(() => undefined);
      await keyStore?.close();
      for (const name of databases)
        await mongo
          ?.db(name)
          .dropDatabase()
          .catch(() => undefined);
      await mongo?.close();
      const groups = (await admin.listGroups()).groups.map(({ groupId }) => groupId).filter((id) => id.startsWith(RUN));
      if (groups.length > 0) await admin.deleteGroups(groups).catch(() => undefined);
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
      for (const server of servers) await server.stop();
    }, 60_000);

    /** One process's cipher over the shared key store and master key, as every replica has. */
    const aProcessCipher = (): SubjectCipher => subjectCipher({ store: keyStore, masterKey });
    const aPublisher = async (cipher?: SubjectCipher): Promise<KafkaAccessLogPublisher> => {
      const publisher = await openKafkaAccessLog({
        brokers,
        clientId: `${RUN}-read-api`,
        log,
        layout: { partitions: 2, replicationFactor: 1 },
        retentionDays: 90,
        topic,
        ...(cipher ? { cipher } : {}),
      });
      closing.push(() => publisher.close());
      return publisher;
    };

    /** The credentials service's projection into a store of its own database, from the topic's start. */
    async function aProjection(database: string, grants: string[], cipher: SubjectCipher): Promise<AccessLogStore> {
      const store = await openMongoAccessLogStore(mongo.db(database), { retentionDays: 3650 });
      const eventLog: KafkaEventLog = await openKafkaEventLog({
        brokers,
        clientId: `${RUN}-credentials`,
        log,
        topics: { names: [], partitions: 2, replicationFactor: 1 },
      });
      const known = { knownClientIds: (asked: readonly string[]) => Promise.resolve(new Set(asked.filter((id) => grants.includes(id)))) };
      const subscription: Subscription = await eventLog.subscribe({
        groupId: `${RUN}-${database}`,
        topics: [topic],
        fromBeginning: true,
        handle: accessLogProjection(store, known, cipher, log),
      });
      closing.push(
        () => eventLog.close(),
        () => store.close(),
        () => subscription.close(),
      );
      await subscription.caughtUp;
      return store;
    }

    async function rawRecords(): Promise<string[]> {
      const offsets = await admin.fetchTopicOffsets(topic);
      const expected = offsets.reduce((sum, { high, low }) => sum + Number(high) - Number(low), 0);
      const consumer = new Kafka({ clientId: `${RUN}-raw`, brokers, logLevel: logLevel.NOTHING }).consumer({
        groupId: `${RUN}-raw-${randomUUID()}`,
      });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const values: string[] = [];
      await new Promise<void>((done) => {
        void consumer.run({
          eachMessage: ({ message }) => {
            values.push(message.value?.toString() ?? '');
            if (values.length >= expected) done();
            return Promise.resolve();
          },
        });
      });
      await consumer.disconnect();
      return values;
    }

    const addressesOf = async (store: AccessLogStore, clientId: string) =>
      (await store.page(clientId, { limit: 100 })).map((record) => record.clientAddress).sort();

    test("when batches are published, then the topic holds no address in clear; once a grant's key is destroyed, its records read with a null address, the other grant's open", async () => {
      const [erased, kept] = [aUniqueClientId(), aUniqueClientId()];
      const readApi = aProcessCipher();
      const publisher = await aPublisher(readApi);
      const batch = (n: number): AccessRecord[] => [
        anAccessRecord(erased, 3_000 + n, { clientAddress: `198.51.100.${n}` }),
        anAccessRecord(kept, 2_000 + n, { clientAddress: `2001:db8::${n}` }),
        anAccessRecord(erased, 1_000 + n, { clientAddress: `203.0.113.${n}` }),
      ];
      await publisher.publish(batch(1));
      await publisher.publish(batch(2));
      // A batch written before sealing (a read API of the earlier build) stays readable.
      await (await aPublisher()).publish([anAccessRecord(kept, 500, { clientAddress: '192.0.2.44' })]);

      const raw = await rawRecords();
      expect(raw).toHaveLength(3);
      expect(raw.filter((value) => value.includes('"rsdsealed":1'))).toHaveLength(2);
      expect(raw.filter((value) => /198\.51\.100|2001:db8|203\.0\.113/.test(value))).toEqual([]);
      expect(raw.every((value) => value.includes(erased) || value.includes(kept))).toBe(true);

      const first = await aProjection(databases[1]!, [erased, kept], aProcessCipher());
      expect(await addressesOf(first, erased)).toEqual(['198.51.100.1', '198.51.100.2', '203.0.113.1', '203.0.113.2']);
      expect(await addressesOf(first, kept)).toEqual(['192.0.2.44', '2001:db8::1', '2001:db8::2']);

      // The grant's erasure (or its organization's offboarding) destroys its key; the read API forgets it on the erasure's event.
      await keyStore.destroy(`grant:${erased}`, ERASED_AT);
      readApi.forget(`grant:${erased}`);
      await publisher.publish(batch(3));
      expect((await rawRecords()).filter((value) => /198\.51\.100|2001:db8|203\.0\.113/.test(value))).toEqual([]);

      // A projection replaying the topic (a new credentials database, a consumer group of its own) finds no address of it.
      const replayed = await aProjection(databases[2]!, [erased, kept], aProcessCipher());
      expect(await addressesOf(replayed, erased)).toEqual([null, null, null, null, null, null]);
      expect(await addressesOf(replayed, kept)).toEqual(['192.0.2.44', '2001:db8::1', '2001:db8::2', '2001:db8::3']);
    }, 120_000);
  });
});
