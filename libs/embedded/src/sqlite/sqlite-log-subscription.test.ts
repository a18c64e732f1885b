import type { EventRecord } from '@rsd/ports';
import { SqliteLogSubscription, type LogReader, type LogRow } from './sqlite-log-subscription';

describe('SQLite log subscription', () => {
  it('when a slow handler takes several slices over a page, then each record is read from the log once', async () => {
    // Fewer records than a page, each taking 0.5 ms to handle: the 2 ms slices end mid-page dozens of times.
    const log: LogRow[] = Array.from({ length: 200 }, (_, n) => ({ seq: n + 1, topic: 'a', key: 'k', value: String(n) }));
    let rowsRead = 0;
    const reader: LogReader = {
      end: () => log.length,
      page: (after, limit) => {
        const rows = log.filter((row) => row.seq > after).slice(0, limit);
        rowsRead += rows.length;
        return rows;
      },
      recordOf: (row): EventRecord => ({ topic: row.topic, partition: 0, offset: String(row.seq), key: row.key, value: row.value }),
      opened: (record) => Promise.resolve(record),
      position: () => undefined,
      savePosition: () => undefined,
    };
    const handled: string[] = [];
    const subscription = new SqliteLogSubscription(
      reader,
      {
        groupId: 'slow',
        topics: ['a'],
        fromBeginning: true,
        ephemeral: true,
        handle: (record) => {
          const until = performance.now() + 0.5;
          while (performance.now() < until);
          handled.push(record.value);
          return Promise.resolve();
        },
      },
      { log: { warn: () => undefined, error: () => undefined }, positionFlushMs: 1 },
      () => undefined,
    );

    await subscription.caughtUp;
    await subscription.close();

    expect(handled).toEqual(log.map((row) => row.value));
    // Read again from the cursor at every slice, the page's rows were read about 50 times over.
    expect(rowsRead).toBe(log.length);
  });
});
