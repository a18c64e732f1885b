import type { EventRecord } from '@rsd/ports';
import { SqliteLogSubscription, type LogPage, type LogReader, type LogRow } from './sqlite-log-subscription';

/** A page as the event log reads it: its topics' rows after `after`, and how far it read. */
function pageOf(log: readonly LogRow[], after: number, limit: number, topics: readonly string[]): LogPage {
  const rows = log.filter((row) => row.seq > after && topics.includes(row.topic)).slice(0, limit);
  return { rows, through: rows.length === limit ? rows.at(-1)!.seq : (log.at(-1)?.seq ?? 0) };
}

/** A subscription to `topics` of `log` (an ephemeral group), and how many rows the log has handed it so far. */
function subscribed(log: readonly LogRow[], topics: string[], handle: (record: EventRecord) => void) {
  let rowsRead = 0;
  const reader: LogReader = {
    end: () => log.length,
    page: (after, limit, pageTopics) => {
      const page = pageOf(log, after, limit, pageTopics);
      rowsRead += page.rows.length;
      return page;
    },
    recordOf: (row): EventRecord => ({ topic: row.topic, partition: 0, offset: String(row.seq), key: row.key, value: row.value }),
    opened: (record) => Promise.resolve(record),
    position: () => undefined,
    savePosition: () => undefined,
  };
  const subscription = new SqliteLogSubscription(
    reader,
    {
      groupId: 'test',
      topics,
      fromBeginning: true,
      ephemeral: true,
      handle: (record) => {
        handle(record);
        return Promise.resolve();
      },
    },
    { log: { warn: () => undefined, error: () => undefined }, positionFlushMs: 1 },
    () => undefined,
  );
  return { subscription, rowsRead: () => rowsRead };
}

describe('SQLite log subscription', () => {
  it('when a slow handler takes several slices over a page, then each record is read from the log once', async () => {
    // Fewer records than a page, each taking 0.5 ms to handle: the 2 ms slices end mid-page dozens of times.
    const log: LogRow[] = Array.from({ length: 200 }, (_, n) => ({ seq: n + 1, topic: 'a', key: 'k', value: String(n) }));
    const handled: string[] = [];
    const { subscription, rowsRead } = subscribed(log, ['a'], (record) => {
      const until = performance.now() + 0.5;
      while (performance.now() < until);
      handled.push(record.value);
    });

    await subscription.caughtUp;
    await subscription.close();

    expect(handled).toEqual(log.map((row) => row.value));
    // Read again from the cursor at every slice, the page's rows were read about 50 times over.
    expect(rowsRead()).toBe(log.length);
  });

  it("when most of the log is another topic's, then only its own topic's rows are handed over, and a wait ends past the other topic's records", async () => {
    // Three pages' worth of another topic (a bulk ingest of scores) around two records of its own.
    const topicOf = (n: number) => (n === 700 || n === 1_300 ? 'a' : 'b');
    const log: LogRow[] = Array.from({ length: 1_600 }, (_, n) => ({ seq: n + 1, topic: topicOf(n + 1), key: 'k', value: String(n + 1) }));
    const handled: string[] = [];
    const { subscription, rowsRead } = subscribed(log, ['a'], (record) => handled.push(record.value));

    await subscription.caughtUp;
    // A writer of the last record (of the other topic) waits for the subscription to be past it.
    await subscription.handled(1_600);
    await subscription.close();

    expect(handled).toEqual(['700', '1300']);
    expect(rowsRead()).toBe(2);
  });
});
