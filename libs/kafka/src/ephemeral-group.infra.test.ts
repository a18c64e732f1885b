import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pino, { type Logger } from 'pino';
import type { Subscription } from '@rsd/ports';
import { describeWithInfra, eventually } from '@rsd/testkit';
import { openKafkaEventLog, type KafkaEventLog } from './index';
import { kafkaForSuite } from './testing/kafka-for-suite';
import { createTopicAdmin } from './topic-admin';

const RUN = `rsd-ephemeral-test-${randomUUID().slice(0, 8)}`;
const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

describeWithInfra('kafka', 'Kafka ephemeral subscriptions', (target) => {
  let log: KafkaEventLog;
  // Declared before the suite's Kafka: hooks run in the order declared, so the log closes before its groups are deleted.
  afterAll(async () => {
    await log?.close();
  });
  const kafka = kafkaForSuite(target, RUN);
  const topic = kafka.topic('feed');

  /** An event log on the suite's topic, logging to `logger`. */
  const openLog = (logger: Logger = silent) =>
    openKafkaEventLog({
      brokers: kafka.brokers(),
      clientId: RUN,
      log: logger,
      topics: { names: [topic], partitions: 3, replicationFactor: 1 },
    });

  beforeAll(async () => {
    log = await openLog();
  }, 120_000);

  const groupsOfThisRun = async (): Promise<string[]> =>
    (await kafka.admin().listGroups()).groups.map(({ groupId }) => groupId).filter((groupId) => groupId.startsWith(RUN));

  /** Follows the topic live, as a read-API replica's change feed does, until a fresh record arrives. */
  async function followOnce(groupId: string): Promise<Subscription> {
    const received: string[] = [];
    const subscription = await log.subscribe({
      groupId,
      topics: [topic],
      fromBeginning: false,
      ephemeral: true,
      handle: (record) => {
        received.push(record.value);
        return Promise.resolve();
      },
    });
    await subscription.caughtUp;
    const marker = randomUUID();
    await log.append(topic, [{ key: 'k', value: marker }]);
    await eventually(() => expect(received).toContain(marker));
    return subscription;
  }

  it('when an ephemeral subscription closes, then it has committed nothing and its group is gone from the broker', async () => {
    const groupId = `${RUN}-single`;
    const subscription = await followOnce(groupId);
    const listedWhileOpen = await groupsOfThisRun();
    const [positions] = await kafka.admin().fetchOffsets({ groupId, topics: [topic] });

    const started = performance.now();
    await subscription.close();
    const closeMs = performance.now() - started;
    process.stderr.write(`[kafka] ephemeral subscription closed and its group deleted in ${closeMs.toFixed(0)} ms\n`);

    expect(listedWhileOpen).toContain(groupId);
    expect(positions?.partitions.map(({ offset }) => offset)).toEqual(['-1', '-1', '-1']);
    expect(await groupsOfThisRun()).not.toContain(groupId);
  });

  it('when the same replica starts and stops its feed twice in a row, then no group is left behind', async () => {
    const groupId = `${RUN}-read-api-feed-replica-a`;

    await (await followOnce(groupId)).close();
    await (await followOnce(groupId)).close();

    expect((await groupsOfThisRun()).filter((listed) => listed.startsWith(groupId))).toEqual([]);
  });

  it('when a group is already gone, then deleting it succeeds', async () => {
    const topics = createTopicAdmin(kafka.admin(), { partitions: 1, replicationFactor: 1 }, silent);

    await expect(topics.deleteGroup(`${RUN}-never-existed`)).resolves.toBeUndefined();
  });

  it('when the last member leaves while the deletion is retried, then the group is deleted', async () => {
    const groupId = `${RUN}-leaving`;
    const admin = kafka.admin();
    const attempts = jest.spyOn(admin, 'deleteGroups');
    const topics = createTopicAdmin(admin, { partitions: 1, replicationFactor: 1 }, silent);
    const member = await log.subscribe({ groupId, topics: [topic], fromBeginning: false, handle: () => Promise.resolve() });
    await member.caughtUp;

    const deletion = topics.deleteGroup(groupId);
    // A second attempt has begun: the first was refused while the member held the group.
    await eventually(() => expect(attempts.mock.calls.length).toBeGreaterThanOrEqual(2));
    await member.close();

    await expect(deletion).resolves.toBeUndefined();
    expect(await groupsOfThisRun()).not.toContain(groupId);
  });

  it('when another member still holds the group, then closing an ephemeral subscription warns instead of failing', async () => {
    const groupId = `${RUN}-shared-by-mistake`;
    const warnings: string[] = [];
    const recording = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    const warned = await openLog(recording);
    const options = { groupId, topics: [topic], fromBeginning: false, ephemeral: true, handle: () => Promise.resolve() };
    const [first, second] = await Promise.all([warned.subscribe(options), log.subscribe(options)]);
    await Promise.all([first.caughtUp, second.caughtUp]);

    await expect(first.close()).resolves.toBeUndefined();
    const listedWhileSecondOpen = await groupsOfThisRun();
    await second.close();
    await warned.close();

    expect(warnings.filter((line) => line.includes('could not delete the ephemeral consumer group'))).toHaveLength(1);
    expect(listedWhileSecondOpen).toContain(groupId);
    expect(await groupsOfThisRun()).not.toContain(groupId);
  });

  it('when the event log closes with an ephemeral subscription still open, then the group is deleted too', async () => {
    const groupId = `${RUN}-open-at-close`;
    const closing = await openLog();
    await closing.subscribe({ groupId, topics: [topic], fromBeginning: false, ephemeral: true, handle: () => Promise.resolve() });
    const listedWhileOpen = await groupsOfThisRun();

    await closing.close();

    expect(listedWhileOpen).toContain(groupId);
    expect(await groupsOfThisRun()).not.toContain(groupId);
  });

  it('when a follower tracks its freshness, then it is known fresh within seconds and stays so while records arrive and are handled', async () => {
    const handled: string[] = [];
    const subscription = await log.subscribe({
      groupId: `${RUN}-fresh`,
      topics: [topic],
      fromBeginning: false,
      ephemeral: true,
      trackFreshness: true,
      handle: (record) => {
        handled.push(record.value);
        return Promise.resolve();
      },
    });
    try {
      const first = await eventually(
        () => {
          expect(subscription.freshAsOf()).toBeDefined();
          return subscription.freshAsOf()!;
        },
        { timeoutMs: 10_000 },
      );
      for (let i = 0; i < 20; i += 1) await log.append(topic, [{ key: `k${i}`, value: `v${i}` }]);
      await eventually(() => expect(handled).toHaveLength(20), { timeoutMs: 10_000 });
      const appended = Date.now();
      // A reading of the ends taken after the last append is reached once the follower has handled it all.
      await eventually(() => expect(subscription.freshAsOf()!.getTime()).toBeGreaterThan(appended), { timeoutMs: 5_000 });

      expect(Date.now() - first.getTime()).toBeLessThan(15_000);
    } finally {
      await subscription.close();
    }
  }, 30_000);
});
