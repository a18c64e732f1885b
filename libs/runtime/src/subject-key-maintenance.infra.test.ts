import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import pino from 'pino';
import { EVENT_TYPES, TOPICS } from '@rsd/contracts';
import { openKafkaEventLog } from '@rsd/kafka';
import { openMongoSubjectKeyStore } from '@rsd/mongo';
import { subjectCipher, type SealedValue } from '@rsd/platform';
import { describeWithInfra } from '@rsd/testkit';
import { kafkaForSuite } from '../../kafka/src/testing/kafka-for-suite';
import { mongoForSuite } from '../../mongo/src/testing/mongo-for-suite';

const RUN = randomUUID().slice(0, 8);
const OLD = Buffer.alloc(32, 31);
const NEW = Buffer.alloc(32, 32);
const MAIN = join(__dirname, '..', '..', '..', 'services', 'credentials', 'dist', 'subject-keys', 'main.js');

/** The task as `npm run subject-keys:*` runs it (jest cannot load the runtime's adapters, which it imports lazily): its report, or its error's line. */
function runSubjectKeyMaintenance(args: string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [MAIN, ...args], { env: { PATH: process.env.PATH, ...env } }, (error, stdout, stderr) => {
      if (error) reject(new Error(`exit ${String(error.code)}: ${stderr}`));
      else resolve(JSON.parse(stdout) as Record<string, unknown>);
    });
  });
}

/**
 * The distributed runtime's `npm run subject-keys:*` on real Kafka and FerretDB: a key store of its
 * own (a database used once), the product's authorizations topic, to which it appends only erasure
 * events of organizations and grants of its own ids.
 */
describeWithInfra('kafka', 'subject-keys tasks on the distributed runtime (decision 56)', (kafkaTarget) =>
  describeWithInfra('mongo', 'on Kafka and MongoDB', (mongoTarget) => {
    // The environment's servers, or containers of their own (CI's Testcontainers run sets no URL).
    const kafka = kafkaForSuite(kafkaTarget, `rsd-subject-keys-${RUN}`);
    const database = `rsd_subject_keys_test_${RUN}`;
    const [offboarded, kept] = [`org-off-${RUN}`, `org-kept-${RUN}`];
    const grant = `grant:rs_${RUN}`;
    let mongo: MongoClient;
    let dir: string;
    // Before mongoForSuite's: jest runs a block's afterAll hooks in their order, and that one closes the client.
    afterAll(() => mongo?.db(database).dropDatabase());
    const mongoServer = mongoForSuite(mongoTarget);
    beforeAll(async () => {
      mongo = mongoServer.client();
      dir = await mkdtemp(join(tmpdir(), 'rsd-subject-keys-infra-'));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));
    const env = (masterKey: Buffer, previous?: Buffer): NodeJS.ProcessEnv => ({
      RUNTIME: 'distributed',
      KAFKA_BROKERS: kafka.brokers().join(','),
      MONGO_URL: mongoServer.url(),
      SUBJECT_KEYS_DB: database,
      SUBJECT_KEYS_MASTER_KEY: masterKey.toString('base64'),
      ...(previous ? { SUBJECT_KEYS_PREVIOUS_MASTER_KEY: previous.toString('base64') } : {}),
      LOG_LEVEL: 'silent',
    });
    const withCipher = async <T>(masterKey: Buffer, work: (cipher: ReturnType<typeof subjectCipher>) => Promise<T>): Promise<T> =>
      work(subjectCipher({ store: await openMongoSubjectKeyStore(mongo.db(database)), masterKey, cache: { ttlMs: 0 } }));
    const stateOf = async (subject: string) => (await (await openMongoSubjectKeyStore(mongo.db(database))).read(subject))?.state;

    it('when the key store is backed up, lost after an offboarding, restored and rotated, then the erasure holds and the new key alone opens the rest', async () => {
      const sealed: SealedValue[] = await withCipher(OLD, async (cipher) => {
        const values = [];
        for (const subject of [`organization:${offboarded}`, `organization:${kept}`, grant]) {
          const outcome = await cipher.seal(subject, { name: 'Acme Recipient Ltd' });
          if (outcome.status === 'sealed') values.push(outcome.sealed);
        }
        return values;
      });
      // A refusal is one line for the operator, with no stack.
      await expect(runSubjectKeyMaintenance(['backup', '--to', dir, '--keep-days', '120'], env(OLD))).rejects.toThrow(
        /^exit 1: --keep-days: must be a whole number of days from 1 to 90 \(the key-store backups' retention\), not "120"\n$/,
      );
      const backup = (await runSubjectKeyMaintenance(['backup', '--to', dir], env(OLD))) as { backup: string; keys: number };
      expect(backup.keys).toBe(3);

      // The offboarding, as the credentials service makes it: the keys destroyed, then its events in clear on the log.
      const keys = await openMongoSubjectKeyStore(mongo.db(database));
      for (const subject of [`organization:${offboarded}`, grant]) await keys.destroy(subject, new Date().toISOString());
      const log = await openKafkaEventLog({
        brokers: kafka.brokers(),
        clientId: `subject-keys-test-${RUN}`,
        log: pino({ level: 'silent' }),
        topics: { names: [TOPICS.authorizations], partitions: 6, replicationFactor: 1 },
      });
      const event = (type: string, data: Record<string, unknown>) => ({
        key: offboarded,
        value: JSON.stringify({ specversion: '1.0', id: randomUUID(), source: 'test', type, time: new Date().toISOString(), data }),
      });
      await log.append(TOPICS.authorizations, [
        event(EVENT_TYPES.authorizationRevoked, { organizationId: offboarded, clientId: `rs_${RUN}` }),
        event(EVENT_TYPES.organizationOffboarded, { organizationId: offboarded, startedAt: new Date().toISOString() }),
      ]);
      await log.close();
      await mongo.db(database).dropDatabase();

      const restored = await runSubjectKeyMaintenance(['restore', backup.backup], env(OLD));
      expect(restored).toMatchObject({ restored: 3, tombstones: 0 });
      expect((restored as { erasuresReapplied: number }).erasuresReapplied).toBeGreaterThanOrEqual(2);
      expect([await stateOf(`organization:${offboarded}`), await stateOf(grant), await stateOf(`organization:${kept}`)]).toEqual([
        'destroyed',
        'destroyed',
        'active',
      ]);

      await expect(runSubjectKeyMaintenance(['rotate'], env(NEW, Buffer.alloc(32, 33)))).rejects.toThrow(
        /1 stored key\(s\) are wrapped by a master key that is neither SUBJECT_KEYS_MASTER_KEY/,
      );
      expect(await runSubjectKeyMaintenance(['rotate'], env(NEW, OLD))).toMatchObject({ rewrapped: 1, alreadyCurrent: 0 });
      const outcomes = await withCipher(NEW, (cipher) =>
        Promise.all(sealed.map((value) => cipher.open(value).then((outcome) => outcome.status))),
      );
      expect(outcomes).toEqual(['erased', 'opened', 'erased']);
    }, 120_000);
  }),
);
