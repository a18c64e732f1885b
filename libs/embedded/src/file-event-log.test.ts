import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventLog, EventRecord, Subscription } from '@rsd/ports';
import { describeEventLogContract, eventually, uniqueName } from '@rsd/testkit';
import type { EmbeddedLogger } from './embedded-logger';
import { openFileEventLog } from './file-event-log';

async function aTempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'rsd-event-log-'));
}

describeEventLogContract('file', async () => {
  const dir = await aTempDir();
  const log = await openFileEventLog({ file: join(dir, 'events.ndjson') });
  return {
    log,
    topic: (base) => uniqueName(base),
    cleanup: async () => {
      await log.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

function recordingLogger(): EmbeddedLogger & { warnings: string[]; errors: string[] } {
  const warnings: string[] = [];
  const errors: string[] = [];
  return { warnings, errors, warn: (_, message) => warnings.push(message), error: (_, message) => errors.push(message) };
}

describe('file event log', () => {
  let dir: string;
  let file: string;
  let logs: EventLog[];

  beforeEach(async () => {
    dir = await aTempDir();
    file = join(dir, 'events.ndjson');
    logs = [];
  });

  afterEach(async () => {
    for (const log of logs) await log.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function openLog(options: Partial<Parameters<typeof openFileEventLog>[0]> = {}): Promise<EventLog> {
    const log = await openFileEventLog({ file, ...options });
    logs.push(log);
    return log;
  }

  async function readAll(log: EventLog, topics: string[]): Promise<EventRecord[]> {
    const received: EventRecord[] = [];
    const subscription = await log.subscribe({
      groupId: 'test',
      topics,
      fromBeginning: true,
      handle: (record) => {
        received.push(record);
        return Promise.resolve();
      },
    });
    await subscription.caughtUp;
    await subscription.close();
    return received;
  }

  it('when records are appended, then each topic counts its own offsets from zero in partition 0', async () => {
    const log = await openLog();

    await log.append('a', [
      { key: 'k', value: '1' },
      { key: 'k', value: '2' },
    ]);
    await log.append('b', [{ key: 'k', value: '3' }]);

    const received = await readAll(log, ['a', 'b']);
    expect(received.map(({ topic, partition, offset }) => [topic, partition, offset])).toEqual([
      ['a', 0, '0'],
      ['a', 0, '1'],
      ['b', 0, '0'],
    ]);
  });

  it('when the log is closed and opened again, then records and offsets are intact', async () => {
    const first = await openLog();
    await first.append('a', [
      { key: 'k1', value: '{"n":1}' },
      { key: 'k2', value: '{"n":2}' },
    ]);
    await first.append('b', [{ key: 'k1', value: '{"n":3}' }]);
    const before = await readAll(first, ['a', 'b']);
    await first.close();

    const reopened = await openLog();
    await reopened.append('a', [{ key: 'k1', value: '{"n":4}' }]);

    const after = await readAll(reopened, ['a', 'b']);
    expect(after.slice(0, 3)).toEqual(before);
    expect(after[3]).toEqual({ topic: 'a', partition: 0, offset: '2', key: 'k1', value: '{"n":4}' });
  });

  it('when the last line was torn by a crash, then it is cut away with a warning and the log stays usable', async () => {
    const first = await openLog();
    await first.append('a', [{ key: 'k', value: '1' }]);
    await first.close();
    await appendFile(file, '{"topic":"a","key":"k","val');
    const logger = recordingLogger();

    const reopened = await openLog({ log: logger });
    await reopened.append('a', [{ key: 'k', value: '2' }]);
    await reopened.close();

    expect(logger.warnings).toHaveLength(1);
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      { topic: 'a', key: 'k', value: '1' },
      { topic: 'a', key: 'k', value: '2' },
    ]);
    expect((await readAll(await openLog(), ['a'])).map((record) => record.offset)).toEqual(['0', '1']);
  });

  it('when a line in the middle cannot be read, then opening fails', async () => {
    await writeFile(file, '{"topic":"a","key":"k","value":"1"}\nnot json\n{"topic":"a","key":"k","value":"2"}\n');

    await expect(openFileEventLog({ file })).rejects.toThrow('corrupt');
  });

  it('when a live subscriber is handling a record, then append resolves only after it has handled it', async () => {
    const log = await openLog();
    const steps: string[] = [];
    const subscription = await log.subscribe({
      groupId: 'slow-projection',
      topics: ['a'],
      fromBeginning: false,
      handle: async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        steps.push('handled');
      },
    });

    await log.append('a', [{ key: 'k', value: '1' }]);
    steps.push('appended');

    expect(steps).toEqual(['handled', 'appended']);
    await subscription.close();
  });

  it('when a handler appends to its own or another topic, then nothing waits on itself', async () => {
    const logger = recordingLogger();
    const log = await openLog({ log: logger });
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
    const log = await openLog({ log: logger });
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
    const log = await openLog({ log: logger, deliveryTimeoutMs: 20 });
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
    const log = await openLog();
    await log.close();

    await expect(log.append('a', [{ key: 'k', value: '1' }])).rejects.toThrow('closed');
    await expect(log.subscribe({ groupId: 'g', topics: ['a'], fromBeginning: true, handle: () => Promise.resolve() })).rejects.toThrow(
      'closed',
    );
  });
});
