import type { EventLog, EventRecord, OutgoingRecord, Subscription } from '@rsd/ports';
import { eventually, uniqueName } from './eventually';
import { aFixturePerTest } from './per-test';

export interface EventLogFixture {
  log: EventLog;
  /** A topic name of its own for this test, derived from `base`. */
  topic: (base: string) => string;
  cleanup(): Promise<void>;
}

interface Collector {
  subscription: Subscription;
  received: EventRecord[];
}

/**
 * What every event log must do. Nothing here assumes one partition: order is checked per key,
 * and delivery is awaited with a bounded poll since it may run behind `append`.
 */
export function describeEventLogContract(name: string, open: () => Promise<EventLogFixture>): void {
  describe(`EventLog contract: ${name}`, () => {
    const subscriptions: Subscription[] = [];
    // Declared before the fixture's: hooks run in the order declared, so subscriptions close before the log.
    afterEach(async () => {
      await Promise.all(subscriptions.splice(0).map((subscription) => subscription.close()));
    });
    const fixture = aFixturePerTest(open);

    async function collect(
      topics: string[],
      fromBeginning: boolean,
      handle: (record: EventRecord) => Promise<void> = () => Promise.resolve(),
    ): Promise<Collector> {
      const received: EventRecord[] = [];
      const subscription = await fixture.log.subscribe({
        groupId: uniqueName('contract-group'),
        topics,
        fromBeginning,
        handle: async (record) => {
          await handle(record);
          received.push(record);
        },
      });
      subscriptions.push(subscription);
      return { subscription, received };
    }

    function valuesOf(received: readonly EventRecord[], key: string): string[] {
      return received.filter((record) => record.key === key).map((record) => record.value);
    }

    const json = (n: number, text = 'plain'): string => JSON.stringify({ n, text });

    it('when records are appended, then a fromBeginning subscriber receives them in per-key order with values intact', async () => {
      const topic = fixture.topic('order');
      const tricky = JSON.stringify({ text: 'quotes " backslash \\ newline \n unicode é 日本 🚀' });
      await fixture.log.append(topic, [
        { key: 'a', value: json(1) },
        { key: 'b', value: json(1) },
        { key: 'a', value: json(2) },
      ]);
      await fixture.log.append(topic, [
        { key: 'b', value: tricky },
        { key: 'a', value: json(3) },
      ]);

      const { received } = await collect([topic], true);

      await eventually(() => expect(received).toHaveLength(5));
      expect(valuesOf(received, 'a')).toEqual([json(1), json(2), json(3)]);
      expect(valuesOf(received, 'b')).toEqual([json(1), tricky]);
      expect(received.every((record) => record.topic === topic)).toBe(true);
      for (const key of ['a', 'b']) {
        const offsets = received.filter((record) => record.key === key).map((record) => BigInt(record.offset));
        expect(offsets).toEqual([...offsets].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
      }
    });

    it('when one subscriber has read the records, then a later fromBeginning subscriber still sees them all', async () => {
      const topic = fixture.topic('replay');
      await fixture.log.append(topic, [
        { key: 'k', value: json(1) },
        { key: 'k', value: json(2) },
      ]);
      const first = await collect([topic], true);
      await eventually(() => expect(first.received).toHaveLength(2));

      const later = await collect([topic], true);

      await eventually(() => expect(valuesOf(later.received, 'k')).toEqual([json(1), json(2)]));
    });

    it('when a live subscriber has caught up, then it receives records appended afterwards and none from before', async () => {
      const topic = fixture.topic('live');
      await fixture.log.append(topic, [{ key: 'k', value: json(1) }]);
      const live = await collect([topic], false);
      await live.subscription.caughtUp;

      await fixture.log.append(topic, [{ key: 'k', value: json(2) }]);

      await eventually(() => expect(valuesOf(live.received, 'k')).toEqual([json(2)]));
    });

    it('when caughtUp resolves, then every record present at subscribe time has been handled', async () => {
      const topic = fixture.topic('caught-up');
      const backlog: OutgoingRecord[] = Array.from({ length: 20 }, (_, n) => ({ key: `k${n % 3}`, value: json(n) }));
      await fixture.log.append(topic, backlog);

      const { subscription, received } = await collect([topic], true);
      await subscription.caughtUp;

      expect(received.map((record) => record.value).sort()).toEqual(backlog.map((record) => record.value).sort());
    });

    it('when records go to two topics, then each subscriber receives only the topics it asked for', async () => {
      const orders = fixture.topic('orders');
      const audits = fixture.topic('audits');
      const onlyOrders = await collect([orders], true);
      const both = await collect([orders, audits], true);

      await fixture.log.append(audits, [{ key: 'k', value: json(1, 'audit') }]);
      await fixture.log.append(orders, [{ key: 'k', value: json(2, 'order') }]);
      await fixture.log.append(orders, [{ key: 'k', value: json(3, 'order') }]);

      await eventually(() => expect(both.received).toHaveLength(3));
      await eventually(() => expect(valuesOf(onlyOrders.received, 'k')).toEqual([json(2, 'order'), json(3, 'order')]));
      expect(onlyOrders.received.every((record) => record.topic === orders)).toBe(true);
      expect(both.received.filter((record) => record.topic === audits).map((record) => record.value)).toEqual([json(1, 'audit')]);
    });

    it('when a subscription is closed, then it receives nothing appended afterwards', async () => {
      const topic = fixture.topic('closed');
      const closing = await collect([topic], true);
      await fixture.log.append(topic, [{ key: 'k', value: json(1) }]);
      await eventually(() => expect(closing.received).toHaveLength(1));

      await closing.subscription.close();
      await fixture.log.append(topic, [{ key: 'k', value: json(2) }]);

      const witness = await collect([topic], true);
      await eventually(() => expect(witness.received).toHaveLength(2));
      expect(valuesOf(closing.received, 'k')).toEqual([json(1)]);
    });

    it('when a handler fails, then the same record is handled again before any later one', async () => {
      const topic = fixture.topic('retry');
      let failures = 0;
      const { received } = await collect([topic], true, (record) => {
        if (record.value === json(1) && failures === 0) {
          failures += 1;
          return Promise.reject(new Error('a passing fault'));
        }
        return Promise.resolve();
      });

      await fixture.log.append(topic, [
        { key: 'k', value: json(1) },
        { key: 'k', value: json(2) },
      ]);

      await eventually(() => expect(valuesOf(received, 'k')).toEqual([json(1), json(2)]));
      expect(failures).toBe(1);
    });

    /** A subscriber that takes batches where the log gives them (`handleBatch`) and single records where it does not. */
    async function collectBatches(topic: string, groupId: string, failFirstBatchWith?: string) {
      const handled: string[] = [];
      const batches: number[] = [];
      let failed = false;
      const take = (records: readonly EventRecord[]) => {
        if (failFirstBatchWith !== undefined && !failed && records.some((record) => record.value === failFirstBatchWith)) {
          failed = true;
          return Promise.reject(new Error('a passing fault'));
        }
        batches.push(records.length);
        handled.push(...records.map((record) => record.value));
        return Promise.resolve();
      };
      const subscription = await fixture.log.subscribe({
        groupId,
        topics: [topic],
        fromBeginning: true,
        handle: (record) => take([record]),
        handleBatch: take,
      });
      subscriptions.push(subscription);
      return { subscription, handled, batches };
    }

    it('when a subscriber takes batches, then each record reaches it once and in order, and the group resumes after the last one', async () => {
      const topic = fixture.topic('batches');
      const groupId = uniqueName('contract-batches');
      const values = Array.from({ length: 300 }, (_, n) => json(n));
      await fixture.log.append(
        topic,
        values.map((value) => ({ key: 'k', value })),
      );

      const first = await collectBatches(topic, groupId);
      await first.subscription.caughtUp;
      await eventually(() => expect(first.handled).toEqual(values));
      await first.subscription.close();
      await fixture.log.append(topic, [{ key: 'k', value: json(300) }]);
      const second = await collectBatches(topic, groupId);

      await eventually(() => expect(second.handled).toEqual([json(300)]));
    });

    it('when a batch fails, then its records are handed over again before any later one, and none is lost', async () => {
      const topic = fixture.topic('batch-retry');
      const values = Array.from({ length: 50 }, (_, n) => json(n));
      await fixture.log.append(
        topic,
        values.map((value) => ({ key: 'k', value })),
      );

      const { handled } = await collectBatches(topic, uniqueName('contract-batch-retry'), json(20));

      await eventually(() => expect(handled).toEqual(values));
    });
  });
}
