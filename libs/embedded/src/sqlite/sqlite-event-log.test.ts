import { TOPICS } from '@rsd/contracts';
import type { EventLog, EventRecord, Subscription } from '@rsd/ports';
import { parseRecord } from '@rsd/consumers';
import { aCalculatedScore, describeEventLogContract, eventually, scoreCalculated, uniqueName } from '@rsd/testkit';
import type { EmbeddedLogger } from '../embedded-logger';
import { aTempDatabasePerTest, onATempDatabase, readCommitted } from '../testing/temp-database';
import { openSqliteEventLog } from './sqlite-event-log';

describeEventLogContract('SQLite', async () => {
  const { store: log, cleanup } = await onATempDatabase('event-log', (file) => openSqliteEventLog({ file }));
  return { log, topic: (base) => uniqueName(base), cleanup };
});

function recordingLogger(): EmbeddedLogger & { warnings: string[]; errors: string[] } {
  const warnings: string[] = [];
  const errors: string[] = [];
  return { warnings, errors, warn: (_, message) => warnings.push(message), error: (_, message) => errors.push(message) };
}

describe('SQLite event log', () => {
  const logs: EventLog[] = [];
  // Declared before the directory's: hooks run in the order declared, so the logs close before it is removed.
  afterEach(async () => {
    for (const log of logs.splice(0)) await log.close();
  });
  const temp = aTempDatabasePerTest('event-log');

  function openLog(options: Partial<Parameters<typeof openSqliteEventLog>[0]> = {}): EventLog {
    const log = openSqliteEventLog({ file: temp.file, ...options });
    logs.push(log);
    return log;
  }

  async function readAll(log: EventLog, topics: string[], groupId = 'test', ephemeral = true): Promise<EventRecord[]> {
    const received: EventRecord[] = [];
    const subscription = await log.subscribe({
      groupId,
      ephemeral,
      topics,
      fromBeginning: true,
      // The record as the log stored it; what it parsed it into is tested on its own.
      handle: ({ parsed: _parsed, ...record }) => {
        received.push(record);
        return Promise.resolve();
      },
    });
    await subscription.caughtUp;
    await subscription.close();
    return received;
  }

  /** Two records on topic a, then one on b: the log's first three. */
  async function appendThree(log: EventLog): Promise<void> {
    await log.append('a', [
      { key: 'k1', value: '{"n":1}' },
      { key: 'k2', value: '{"n":2}' },
    ]);
    await log.append('b', [{ key: 'k1', value: '{"n":3}' }]);
  }

  it('when records are appended, then their offsets are their places in the whole log, in partition 0', async () => {
    const log = openLog();

    await appendThree(log);

    const received = await readAll(log, ['a', 'b']);
    expect(received.map(({ topic, partition, offset }) => [topic, partition, offset])).toEqual([
      ['a', 0, '1'],
      ['a', 0, '2'],
      ['b', 0, '3'],
    ]);
  });

  it('when the log is closed and opened again, then records and offsets are intact', async () => {
    const first = openLog();
    await appendThree(first);
    const before = await readAll(first, ['a', 'b']);
    await first.close();

    const reopened = openLog();
    await reopened.append('a', [{ key: 'k1', value: '{"n":4}' }]);

    const after = await readAll(reopened, ['a', 'b']);
    expect(after.slice(0, 3)).toEqual(before);
    expect(after[3]).toEqual({ topic: 'a', partition: 0, offset: '4', key: 'k1', value: '{"n":4}' });
  });

  it('when a group has handled records and the log is opened again, then the group resumes after its committed position', async () => {
    const first = openLog({ positionFlushMs: 1 });
    await first.append('a', [
      { key: 'k', value: '1' },
      { key: 'k', value: '2' },
    ]);
    expect((await readAll(first, ['a'], 'projection', false)).map((record) => record.value)).toEqual(['1', '2']);
    await first.append('a', [{ key: 'k', value: '3' }]);
    await first.close();

    const reopened = openLog();

    expect((await readAll(reopened, ['a'], 'projection', false)).map((record) => record.value)).toEqual(['3']);
    expect((await readAll(reopened, ['a'], 'projection', false)).map((record) => record.value)).toEqual([]);
    expect((await readAll(reopened, ['a'], 'another-group', false)).map((record) => record.value)).toEqual(['1', '2', '3']);
  });

  it("when a group's topics have nothing after its last record, then its position moves past the other topics' records", async () => {
    const log = openLog({ positionFlushMs: 1 });
    await log.append('a', [{ key: 'k', value: '1' }]);
    await log.append('b', [
      { key: 'k', value: '2' },
      { key: 'k', value: '3' },
    ]);

    expect((await readAll(log, ['a'], 'projection', false)).map((record) => record.value)).toEqual(['1']);

    // At its last record's (1), every start would read the records of b after it again. Written with the next commit.
    await eventually(() => expect(committedPosition('projection')).toBe(3));
  });

  it('when a subscriber catches up on a backlog of several pages, then other work runs and its position commits between pages', async () => {
    const log = openLog({ positionFlushMs: 1 });
    await log.append(
      'a',
      Array.from({ length: 1500 }, (_, n) => ({ key: 'k', value: String(n) })),
    );
    const seen = { tasksRun: 0, committedMidway: [] as number[] };
    let otherWork = setImmediate(function again() {
      seen.tasksRun += 1;
      otherWork = setImmediate(again);
    });
    const subscription = await log.subscribe({
      groupId: 'projection',
      topics: ['a'],
      fromBeginning: true,
      handle: (record) => {
        if (record.value === '1499') seen.committedMidway.push(committedPosition('projection') ?? 0);
        return Promise.resolve();
      },
    });

    await subscription.caughtUp;
    clearImmediate(otherWork);

    // Two pauses at least (after the pages of 512 ending at 512 and 1,024): tasks ran, and a position was saved.
    expect(seen.tasksRun).toBeGreaterThanOrEqual(2);
    expect(seen.committedMidway[0]).toBeGreaterThanOrEqual(512);
    await subscription.close();
  });

  it('when handling a backlog takes long, then the subscriber lets other work run every few milliseconds, not only between pages', async () => {
    const log = openLog({ positionFlushMs: 1 });
    // Fewer records than a page: only the time slice can make the subscriber pause.
    await log.append(
      'a',
      Array.from({ length: 400 }, (_, n) => ({ key: 'k', value: String(n) })),
    );
    // Measured in the process's CPU time, not the clock's: a busy machine that takes the core away for
    // a while lengthens the clock's gaps, but only holding the loop lengthens these.
    const cpuMs = () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    };
    let longestWithoutOtherWork = 0;
    let lastOtherWork = cpuMs();
    let otherWork = setImmediate(function again() {
      lastOtherWork = cpuMs();
      otherWork = setImmediate(again);
    });
    const subscription = await log.subscribe({
      groupId: 'projection',
      topics: ['a'],
      fromBeginning: true,
      handle: () => {
        // 0.2 ms of work per record: 80 ms for the backlog, which would otherwise hold the loop at once.
        const until = performance.now() + 0.2;
        while (performance.now() < until);
        longestWithoutOtherWork = Math.max(longestWithoutOtherWork, cpuMs() - lastOtherWork);
        return Promise.resolve();
      },
    });

    await subscription.caughtUp;
    clearImmediate(otherWork);

    // The slice is 2 ms; the margin is for a busy machine.
    expect(longestWithoutOtherWork).toBeLessThan(25);
    await subscription.close();
  });

  /** A group's position as another process would read it: committed only. */
  function committedPosition(groupId: string): number | undefined {
    const row = readCommitted(temp.file, (other) => other.prepare('SELECT seq FROM positions WHERE group_id = ?').get(groupId));
    return row ? Number(row.seq) : undefined;
  }

  it('when an ephemeral group closes, then it leaves no position behind', async () => {
    const log = openLog({ positionFlushMs: 1 });
    await log.append('a', [{ key: 'k', value: '1' }]);

    await readAll(log, ['a'], 'rebuild', true);

    expect((await readAll(log, ['a'], 'rebuild', false)).map((record) => record.value)).toEqual(['1']);
  });

  it('when many appends arrive at once, then each is durable with its own increasing offsets and all share commits', async () => {
    const log = openLog();

    await Promise.all(Array.from({ length: 50 }, (_, n) => log.append('a', [{ key: `k${n}`, value: String(n) }])));

    const received = await readAll(log, ['a']);
    expect(received.map((record) => Number(record.value)).sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, n) => n));
    expect(received.map((record) => Number(record.offset))).toEqual(Array.from({ length: 50 }, (_, n) => n + 1));
  });

  it('when the log holds more records than one page, then a subscriber reads them all, in order', async () => {
    const log = openLog();
    const records = Array.from({ length: 1_300 }, (_, n) => ({ key: 'k', value: String(n) }));
    await log.append('a', records);
    await log.append('b', [{ key: 'k', value: 'other topic' }]);
    await log.append('a', [{ key: 'k', value: 'last' }]);

    const received = await readAll(log, ['a']);

    expect(received.map((record) => record.value)).toEqual([...records.map((record) => record.value), 'last']);
  });

  it('when two subscriptions read a record, then it is parsed once: both get the same frozen answer, what parseRecord would say', async () => {
    const log = openLog();
    const event = scoreCalculated(aCalculatedScore('acme', '2026-11-20'));
    await log.append(TOPICS.scores, [{ key: 'acme', value: JSON.stringify(event) }]);
    await log.append(TOPICS.scores, [{ key: 'acme', value: 'not json' }]);
    const heard = (groupId: string) => {
      const records: EventRecord[] = [];
      return {
        records,
        subscribed: log.subscribe({
          groupId,
          ephemeral: true,
          topics: [TOPICS.scores],
          fromBeginning: true,
          handle: (record) => {
            records.push(record);
            return Promise.resolve();
          },
        }),
      };
    };
    const [first, second] = [heard('read-api'), heard('notifier')];
    for (const subscription of await Promise.all([first.subscribed, second.subscribed])) {
      await subscription.caughtUp;
      await subscription.close();
    }

    expect(first.records.map((record) => record.parsed)).toEqual([{ event }, { reason: 'the value is not JSON' }]);
    expect(first.records.map(parseRecord)).toEqual([{ event }, { reason: 'the value is not JSON' }]);
    expect(second.records.map((record) => record.parsed)).toEqual(first.records.map((record) => record.parsed));
    expect(second.records[0]!.parsed).toBe(first.records[0]!.parsed);
    const parsed = first.records[0]!.parsed as { event: typeof event };
    expect(Object.isFrozen(parsed.event) && Object.isFrozen(parsed.event.data.pillarScores)).toBe(true);
  });

  it('when a live subscriber is handling a record, then append resolves only after it has handled it', async () => {
    const log = openLog();
    const steps: string[] = [];
    const subscription = await log.subscribe({
      groupId: 'slow-projection',
      topics: ['a'],
      fromBeginning: false,
      handle: async () => {
        await someTurnsLater();
        steps.push('handled');
      },
    });

    await log.append('a', [{ key: 'k', value: '1' }]);
    steps.push('appended');

    expect(steps).toEqual(['handled', 'appended']);
    await subscription.close();
  });

  it('when a subscriber is awaited on one topic only, then appends to its other topics do not wait for it', async () => {
    const log = openLog();
    const steps: string[] = [];
    const subscription = await log.subscribe({
      groupId: 'notifier-like',
      topics: ['authorizations', 'scores'],
      fromBeginning: false,
      awaitedOn: ['authorizations'],
      handle: async (record) => {
        await someTurnsLater();
        steps.push(`handled ${record.topic}`);
      },
    });

    await log.append('scores', [{ key: 'k', value: '1' }]);
    steps.push('appended scores');
    await log.append('authorizations', [{ key: 'k', value: '2' }]);
    steps.push('appended authorizations');

    expect(steps).toEqual(['appended scores', 'handled scores', 'handled authorizations', 'appended authorizations']);
    await subscription.close();
  });

  it('when a handler appends to its own or another topic, then nothing waits on itself', async () => {
    const logger = recordingLogger();
    const log = openLog({ log: logger });
    const deadLetters: string[] = [];
    const projector = await log.subscribe({
      groupId: 'projector',
      topics: ['a'],
      fromBeginning: true,
      handle: async (record) => {
        if (record.value === 'bad') {
          await log.append('dead-letter', [{ key: record.key ?? '', value: record.value }]);
          await log.append('a', [{ key: 'k', value: 'follow-up' }]);
        }
      },
    });
    const deadLetterReader = await log.subscribe({
      groupId: 'dead-letter-reader',
      topics: ['dead-letter'],
      fromBeginning: true,
      handle: (record) => {
        deadLetters.push(record.value);
        return Promise.resolve();
      },
    });

    await log.append('a', [{ key: 'k', value: 'bad' }]);

    await eventually(() => expect(deadLetters).toEqual(['bad']));
    expect(logger.warnings).toEqual([]);
    await Promise.all([projector.close(), deadLetterReader.close()]);
  });

  it('when a handler fails, then the failure is logged and the record is tried again', async () => {
    const logger = recordingLogger();
    const log = openLog({ log: logger });
    let attempts = 0;
    const subscription = await log.subscribe({
      groupId: 'flaky',
      topics: ['a'],
      fromBeginning: true,
      handle: () => {
        attempts += 1;
        return attempts === 1 ? Promise.reject(new Error('store away')) : Promise.resolve();
      },
    });

    await log.append('a', [{ key: 'k', value: '1' }]);

    expect(attempts).toBe(2);
    expect(logger.errors).toHaveLength(1);
    await subscription.close();
  });

  it('when a subscriber does not finish in time, then append answers anyway with a warning', async () => {
    const logger = recordingLogger();
    const log = openLog({ log: logger, deliveryTimeoutMs: 20 });
    let release: () => void = () => undefined;
    const stuck: Subscription = await log.subscribe({
      groupId: 'stuck',
      topics: ['a'],
      fromBeginning: false,
      handle: () => new Promise((resolve) => (release = resolve)),
    });

    await log.append('a', [{ key: 'k', value: '1' }]);
    const warnings = [...logger.warnings];
    release();
    await stuck.close();

    expect(warnings).toHaveLength(1);
  });

  it('when the log is closed, then append and subscribe are refused', async () => {
    const log = openLog();
    await log.close();

    await expect(log.append('a', [{ key: 'k', value: '1' }])).rejects.toThrow('closed');
    await expect(log.subscribe({ groupId: 'g', topics: ['a'], fromBeginning: true, handle: () => Promise.resolve() })).rejects.toThrow(
      'closed',
    );
  });
});

/** A handler that takes a while: several turns of the event loop, in which an append that did not wait for it would have finished. */
async function someTurnsLater(): Promise<void> {
  for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}
