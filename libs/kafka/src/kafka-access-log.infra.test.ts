import { randomUUID } from 'node:crypto';
import { ConfigResourceTypes, Kafka } from 'kafkajs';
import pino from 'pino';
import { accessRecordBatchSchema, type AccessRecord } from '@rsd/contracts';
import { anAccessRecord, aUniqueClientId, describeWithInfra } from '@rsd/testkit';
import { openKafkaAccessLog } from './kafka-access-log';
import { kafkaForSuite } from './testing/kafka-for-suite';
import { switchableNetwork } from './testing/switchable-network';

const RUN = `rsd-access-test-${randomUUID().slice(0, 8)}`;
const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const DAY_MS = 86_400_000;

describeWithInfra('kafka', 'Kafka access-log stream', (target) => {
  const kafka = kafkaForSuite(target, RUN);
  const aTopic = () => kafka.topic('stream');
  const open = (topic: string, retentionDays: number, config = {}) =>
    openKafkaAccessLog({
      brokers: kafka.brokers(),
      clientId: RUN,
      log: silent,
      layout: { partitions: 2, replicationFactor: 1 },
      retentionDays,
      topic,
      kafka: config,
    });

  async function configOf(topic: string): Promise<Record<string, string>> {
    const described = await kafka.admin().describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms', 'cleanup.policy'] }],
    });
    return Object.fromEntries((described.resources[0]?.configEntries ?? []).map((entry) => [entry.configName, entry.configValue]));
  }

  test('when the stream opens, then its topic exists with time-based retention, and a changed retention is set at the next start', async () => {
    const topic = aTopic();

    await (await open(topic, 90)).close();
    const created = await configOf(topic);
    await (await open(topic, 7)).close();

    expect(created).toEqual({ 'retention.ms': String(90 * DAY_MS), 'cleanup.policy': 'delete' });
    expect(await configOf(topic)).toEqual({ 'retention.ms': String(7 * DAY_MS), 'cleanup.policy': 'delete' });
  }, 60_000);

  test('when a batch is published, then one message carries it, valid under the batch schema, with nothing but the records', async () => {
    const topic = aTopic();
    const publisher = await open(topic, 90);
    const records = [
      anAccessRecord(aUniqueClientId(), 2_000),
      anAccessRecord(aUniqueClientId(), 1_000, { status: 429, code: 'RATE_LIMITED' }),
    ];
    await publisher.publish(records);
    await publisher.close();

    const consumer = new Kafka({ clientId: `${RUN}-reader`, brokers: kafka.brokers(), logCreator: () => () => undefined }).consumer({
      groupId: `${RUN}-reader`,
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const value = await new Promise<string>((done) => {
      void consumer.run({ eachMessage: ({ message }) => Promise.resolve(done(message.value?.toString() ?? '')) });
    });
    await consumer.disconnect();
    await kafka
      .admin()
      .deleteGroups([`${RUN}-reader`])
      .catch(() => undefined);

    const batch = accessRecordBatchSchema.parse(JSON.parse(value));
    expect(batch.records).toEqual<AccessRecord[]>(records);
  }, 60_000);

  test('when the brokers become unreachable, then a publish rejects within a few seconds instead of hanging', async () => {
    const network = switchableNetwork();
    const publisher = await open(aTopic(), 90, { socketFactory: network.socketFactory });
    network.cut();

    const started = performance.now();
    await expect(publisher.publish([anAccessRecord(aUniqueClientId(), 0)])).rejects.toThrow(/failed/);
    const tookMs = performance.now() - started;
    await publisher.close();

    process.stderr.write(`[access-log] publish to an unreachable stream failed after ${tookMs.toFixed(0)} ms\n`);
    expect(tookMs).toBeLessThan(10_000);
  }, 60_000);
});
