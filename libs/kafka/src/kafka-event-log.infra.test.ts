import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { AssignerProtocol, ConfigResourceTypes, type KafkaConfig } from 'kafkajs';
import pino from 'pino';
import type { EventLog, EventRecord, Subscription } from '@rsd/ports';
import { describeEventLogContract, describeWithInfra, eventually } from '@rsd/testkit';
import { openKafkaEventLog, UnknownTopicError, type KafkaEventLog } from './index';
import { kafkaForSuite } from './testing/kafka-for-suite';
import { switchableNetwork } from './testing/switchable-network';

const PARTITIONS = 3;
const RUN = `rsd-kafka-test-${randomUUID().slice(0, 8)}`;
const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

describeWithInfra('kafka', 'KafkaEventLog', (target) => {
  const kafka = kafkaForSuite(target, RUN);

  function openLog(names: readonly string[], config?: Partial<KafkaConfig>): Promise<KafkaEventLog> {
    return openKafkaEventLog({
      brokers: kafka.brokers(),
      clientId: RUN,
      log: silent,
      topics: { names, partitions: PARTITIONS, replicationFactor: 1 },
      ...(config ? { kafka: config } : {}),
    });
  }

  describeEventLogContract('kafka', async () => {
    const kafkaLog = await openLog([]);
    // The contract names its topics synchronously; they exist once these creations settle.
    const creations: Promise<void>[] = [];
    const topicsReady = () => Promise.all(creations);
    const log: EventLog = {
      async append(topic, records) {
        await topicsReady();
        await kafkaLog.append(topic, records);
      },
      async subscribe(options) {
        await topicsReady();
        kafka.deleteGroupAfter(options.groupId);
        return kafkaLog.subscribe(options);
      },
      close: () => kafkaLog.close(),
    };
    return {
      log,
      topic(base) {
        const name = kafka.topic(base);
        creations.push(kafkaLog.ensureTopics([name]));
        return name;
      },
      async cleanup() {
        await Promise.allSettled(creations);
        await kafkaLog.close();
      },
    };
  });

  describe('Kafka specifics', () => {
    const opened: KafkaEventLog[] = [];
    const subscriptions: Subscription[] = [];

    async function open(names: readonly string[], config?: Partial<KafkaConfig>): Promise<KafkaEventLog> {
      const log = await openLog(names, config);
      opened.push(log);
      return log;
    }

    async function subscribe(
      log: KafkaEventLog,
      groupId: string,
      topic: string,
      handle: (record: EventRecord) => Promise<void>,
      fromBeginning = true,
    ): Promise<Subscription> {
      const subscription = await log.subscribe({ groupId, topics: [topic], fromBeginning, handle });
      subscriptions.push(subscription);
      return subscription;
    }

    /** A topic of its own holding `count` records (values 0, 1, …), a log open on it, and a group of its own. */
    async function aTopicHolding(base: string, count: number, keyOf: (n: number) => string) {
      const topic = kafka.topic(base);
      const log = await open([topic]);
      const groupId = kafka.group(base);
      await log.append(
        topic,
        Array.from({ length: count }, (_, n) => ({ key: keyOf(n), value: String(n) })),
      );
      return { topic, log, groupId };
    }

    afterEach(async () => {
      await Promise.all(subscriptions.splice(0).map((subscription) => subscription.close()));
      await Promise.all(opened.splice(0).map((log) => log.close()));
    });

    it('when one append holds more than a broker takes in one batch (3 MiB under one key), then every record is written, in order', async () => {
      const padding = 'x'.repeat(3_000);
      const { topic, log, groupId } = await aTopicHolding('large-append', 0, () => 'k');
      // One key, so one partition: the broker's 1 MiB limit applies to that partition's batch.
      await log.append(
        topic,
        Array.from({ length: 1_000 }, (_, n) => ({ key: 'one-key', value: `${n} ${padding}` })),
      );
      const seen: number[] = [];
      await subscribe(log, groupId, topic, (record) => {
        seen.push(Number(record.value.split(' ')[0]));
        return Promise.resolve();
      });
      await eventually(() => expect(seen).toHaveLength(1_000), { timeoutMs: 30_000, intervalMs: 100 });
      expect(seen).toEqual(Array.from({ length: 1_000 }, (_, n) => n));
    });

    it('when the log opens, then it creates missing topics with the configured partitions and unlimited retention, and leaves existing ones alone', async () => {
      const existing = kafka.topic('existing');
      await kafka.admin().createTopics({ waitForLeaders: true, topics: [{ topic: existing, numPartitions: 1 }] });
      const fresh = kafka.topic('fresh');

      await open([fresh, existing]);

      const { topics } = await kafka.admin().fetchTopicMetadata({ topics: [fresh, existing] });
      const partitionsOf = (name: string) => topics.find((topic) => topic.name === name)?.partitions.length;
      expect(partitionsOf(fresh)).toBe(PARTITIONS);
      expect(partitionsOf(existing)).toBe(1);
      const { resources } = await kafka.admin().describeConfigs({
        includeSynonyms: false,
        resources: [{ type: ConfigResourceTypes.TOPIC, name: fresh, configNames: ['retention.ms', 'retention.bytes'] }],
      });
      const settings = Object.fromEntries((resources[0]?.configEntries ?? []).map((entry) => [entry.configName, entry.configValue]));
      expect(settings).toEqual({ 'retention.ms': '-1', 'retention.bytes': '-1' });
    });

    it('when a topic does not exist, then append and subscribe reject with a clear error and the topic is not created', async () => {
      const log = await open([]);
      const missing = kafka.topic('missing');
      const handle = () => Promise.resolve();

      await expect(log.append(missing, [{ key: 'k', value: '{}' }])).rejects.toThrow(UnknownTopicError);
      await expect(log.append(missing, [{ key: 'k', value: '{}' }])).rejects.toThrow(`Kafka topic "${missing}" does not exist`);
      await expect(log.subscribe({ groupId: kafka.group('missing'), topics: [missing], fromBeginning: true, handle })).rejects.toThrow(
        UnknownTopicError,
      );
      expect(await kafka.admin().listTopics()).not.toContain(missing);
    });

    it('when a handler fails, then its position is not committed: a new subscription of the group gets the failed record again and nothing before it', async () => {
      const topic = kafka.topic('commit');
      const log = await open([topic]);
      const groupId = kafka.group('commit');
      const seen: string[] = [];
      const first = await subscribe(log, groupId, topic, (record) => {
        seen.push(record.value);
        return record.value === '2' ? Promise.reject(new Error('a passing fault')) : Promise.resolve();
      });

      await log.append(
        topic,
        [1, 2, 3].map((n) => ({ key: 'k', value: String(n) })),
      );

      await eventually(() => expect(seen.filter((value) => value === '2').length).toBeGreaterThanOrEqual(2));
      expect(seen).not.toContain('3');
      const [positions] = await kafka.admin().fetchOffsets({ groupId, topics: [topic] });
      expect(positions?.partitions.map(({ offset }) => offset).sort()).toEqual(['-1', '-1', '1']);
      expect(await log.lag(groupId)).toBe(2);

      await first.close();
      const again: string[] = [];
      await subscribe(log, groupId, topic, (record) => {
        again.push(record.value);
        return Promise.resolve();
      });

      await eventually(() => expect(again).toEqual(['2', '3']));
      await eventually(async () => expect(await log.lag(groupId, [topic])).toBe(0));
    });

    it('when a live-only subscription starts, then records appended as soon as subscribe resolves are delivered and older ones are not', async () => {
      const topic = kafka.topic('live-start');
      const log = await open([topic]);
      await log.append(topic, [{ key: 'k', value: 'old' }]);
      const received: string[] = [];
      const live = await subscribe(
        log,
        kafka.group('live-start'),
        topic,
        (record) => {
          received.push(record.value);
          return Promise.resolve();
        },
        false,
      );

      await log.append(topic, [{ key: 'k', value: 'new' }]);

      await eventually(() => expect(received).toEqual(['new']));
      await live.caughtUp;
    });

    it('when a subscriber takes batches, then the records of a partition come several at a time, and the position of the group follows the last', async () => {
      const { topic, log, groupId } = await aTopicHolding('batches', 500, () => 'one key, one partition');
      const batches: number[] = [];
      const subscription = await log.subscribe({
        groupId,
        topics: [topic],
        fromBeginning: true,
        handle: () => Promise.reject(new Error('a log that fetches batches hands them over whole')),
        handleBatch: (records) => {
          batches.push(records.length);
          return Promise.resolve();
        },
      });
      subscriptions.push(subscription);

      await subscription.caughtUp;
      await eventually(async () => expect(await log.lag(groupId, [topic])).toBe(0));
      expect(batches.reduce((sum, size) => sum + size, 0)).toBe(500);
      expect(Math.max(...batches)).toBeGreaterThan(1);
    });

    it('when records are appended and then consumed, then the lag goes from their count to zero', async () => {
      const { topic, log, groupId } = await aTopicHolding('lag', 5, (n) => `k${n}`);
      const lagBefore = await log.lag(groupId, [topic]);

      await subscribe(log, groupId, topic, () => Promise.resolve());

      expect(lagBefore).toBe(5);
      await eventually(async () => expect(await log.lag(groupId, [topic])).toBe(0));
    });

    it('when two subscriptions share a group, then they split the partitions and together handle every record once', async () => {
      const topic = kafka.topic('shared');
      const log = await open([topic]);
      const groupId = kafka.group('shared');
      const received: EventRecord[][] = [[], []];
      const members = await Promise.all(
        received.map((into) =>
          subscribe(log, groupId, topic, (record) => {
            into.push(record);
            return Promise.resolve();
          }),
        ),
      );
      await Promise.all(members.map((member) => member.caughtUp));
      await eventually(
        async () => {
          const [group] = (await kafka.admin().describeGroups([groupId])).groups;
          expect(group?.state).toBe('Stable');
          const assigned = (group?.members ?? []).map(
            (member) => AssignerProtocol.MemberAssignment.decode(member.memberAssignment)?.assignment[topic] ?? [],
          );
          expect(assigned.map((partitions) => partitions.length).sort()).toEqual([1, 2]);
        },
        { timeoutMs: 15_000, intervalMs: 100 },
      );

      const values = Array.from({ length: 30 }, (_, n) => String(n));
      await log.append(
        topic,
        values.map((value) => ({ key: `key-${value}`, value })),
      );
      await eventually(async () => expect(await log.lag(groupId, [topic])).toBe(0));

      const all = received.flat();
      expect(all.map((record) => record.value).sort()).toEqual([...values].sort());
      const partitionsOf = (records: EventRecord[]) => new Set(records.map((record) => record.partition));
      const [mine, theirs] = received.map(partitionsOf);
      expect(mine?.size).toBeGreaterThan(0);
      expect(theirs?.size).toBeGreaterThan(0);
      expect([...(mine ?? [])].filter((partition) => theirs?.has(partition))).toEqual([]);
    });

    it('when the brokers become unreachable, then append fails within seconds, and once they are back the same log appends and delivers again', async () => {
      const topic = kafka.topic('outage');
      const network = switchableNetwork();
      const log = await open([topic], { socketFactory: network.socketFactory });
      const received: string[] = [];
      await subscribe(log, kafka.group('outage'), topic, (record) => {
        received.push(record.value);
        return Promise.resolve();
      });
      await log.append(topic, [{ key: 'k', value: 'before' }]);
      await eventually(() => expect(received).toEqual(['before']));

      network.cut();
      const started = performance.now();
      await expect(log.append(topic, [{ key: 'k', value: 'during' }])).rejects.toThrow(`Kafka topic "${topic}" failed`);
      const failedAfterMs = performance.now() - started;
      process.stderr.write(`[kafka] append rejected ${failedAfterMs.toFixed(0)} ms after the connections were reset\n`);
      await expect(log.ping()).rejects.toThrow();
      network.restore();
      await log.append(topic, [{ key: 'k', value: 'after' }]);

      expect(failedAfterMs).toBeLessThan(5_000);
      await eventually(() => expect(received).toEqual(['before', 'after']), { timeoutMs: 20_000, intervalMs: 50 });
      await expect(log.ping()).resolves.toBeUndefined();
    }, 40_000);

    it('when a send times out although the broker wrote it, then the next append is still written and not taken for a duplicate', async () => {
      const topic = kafka.topic('lost-ack');
      const network = switchableNetwork();
      const log = await open([topic], { socketFactory: network.socketFactory, requestTimeout: 500 });
      await log.append(topic, [{ key: 'k', value: 'a' }]);

      network.stall();
      await expect(log.append(topic, [{ key: 'k', value: 'b' }])).rejects.toThrow('timed out');
      network.restore();
      await log.append(topic, [{ key: 'k', value: 'c' }]);

      const seen: string[] = [];
      await subscribe(log, kafka.group('lost-ack'), topic, (record) => {
        seen.push(record.value);
        return Promise.resolve();
      });
      await eventually(() => expect(seen).toContain('c'));
      expect(seen).toEqual(['a', 'b', 'c']);
    }, 30_000);
  });
});
