import type { AccessRecord } from '@rsd/contracts';
import { createLogger } from '@rsd/platform';
import { useFakeTimersFromZero } from '@rsd/testkit';
import { createAccessRecorder, type AccessRecorderOptions } from './access-recorder';

const log = createLogger('read-api', 'silent');

let sequence = 0;
function aRecord(): AccessRecord {
  sequence += 1;
  return {
    id: `id-${sequence}`,
    clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
    at: new Date(1_795_000_000_000 + sequence).toISOString(),
    resource: 'score',
    status: 200,
    code: null,
    clientAddress: '198.51.100.7',
    requestId: `req-${sequence}`,
  };
}

/** A stream that takes batches, fails them, or holds them unanswered, as the test says. */
function aStream() {
  const batches: AccessRecord[][] = [];
  const state = { mode: 'up' as 'up' | 'down' | 'hanging', attempts: 0 };
  const publish = (records: readonly AccessRecord[]): Promise<void> => {
    state.attempts += 1;
    if (state.mode === 'down') return Promise.reject(new Error('the stream is unreachable'));
    if (state.mode === 'hanging') return new Promise(() => undefined);
    batches.push([...records]);
    return Promise.resolve();
  };
  return { batches, state, publish, published: () => batches.flat() };
}

function aRecorder(publish: AccessRecorderOptions['publish'], overrides: Partial<AccessRecorderOptions> = {}) {
  const counted = { published: 0, failures: 0, dropped: { buffer_full: 0, shutdown: 0 }, buffered: 0 };
  const recorder = createAccessRecorder({
    publish,
    maxBuffered: 100,
    batchSize: 10,
    flushIntervalMs: 1_000,
    log,
    metrics: {
      published: (n) => (counted.published += n),
      publishFailed: () => (counted.failures += 1),
      dropped: (reason, n) => (counted.dropped[reason] += n),
      buffered: (n) => (counted.buffered = n),
    },
    ...overrides,
  });
  return { recorder, counted };
}

describe('access recorder (decision 21)', () => {
  useFakeTimersFromZero();

  test('when fewer records than a batch arrive, then nothing is published until the interval, and then all of them at once', async () => {
    const stream = aStream();
    const { recorder } = aRecorder(stream.publish);
    const records = [aRecord(), aRecord(), aRecord()];

    records.forEach((record) => recorder.record(record));
    await jest.advanceTimersByTimeAsync(999);
    const before = stream.published().length;
    await jest.advanceTimersByTimeAsync(1);

    expect(before).toBe(0);
    expect(stream.batches).toEqual([records]);
    await recorder.stop(1_000);
  });

  test('when a whole batch is waiting, then it goes out without waiting for the interval, no batch is larger, and the rest waits for the interval', async () => {
    const stream = aStream();
    const { recorder } = aRecorder(stream.publish);

    for (let n = 0; n < 25; n += 1) recorder.record(aRecord());
    await jest.advanceTimersByTimeAsync(0);
    const atOnce = stream.batches.map((batch) => batch.length);
    await jest.advanceTimersByTimeAsync(1_000);

    expect(atOnce).toEqual([10, 10]);
    expect(stream.batches.map((batch) => batch.length)).toEqual([10, 10, 5]);
    await recorder.stop(1_000);
  });

  test('when records keep arriving while a batch is being published, then only whole batches go out until the interval', async () => {
    let release: () => void = () => undefined;
    const batches: number[] = [];
    const slow = (records: readonly AccessRecord[]) => {
      batches.push(records.length);
      return new Promise<void>((done) => (release = done));
    };
    const { recorder } = aRecorder(slow);

    for (let n = 0; n < 10; n += 1) recorder.record(aRecord());
    await jest.advanceTimersByTimeAsync(0);
    for (let n = 0; n < 3; n += 1) recorder.record(aRecord());
    release();
    await jest.advanceTimersByTimeAsync(0);
    const beforeInterval = [...batches];
    await jest.advanceTimersByTimeAsync(1_000);
    release();

    expect(beforeInterval).toEqual([10]);
    expect(batches).toEqual([10, 3]);
    await recorder.stop(1_000);
  });

  test('when the stream is unreachable, then records wait in order and reach it once it is back, each once, and the failures are counted', async () => {
    const stream = aStream();
    const { recorder, counted } = aRecorder(stream.publish);
    stream.state.mode = 'down';
    const records = Array.from({ length: 35 }, aRecord);

    records.forEach((record) => recorder.record(record));
    await jest.advanceTimersByTimeAsync(5_000);
    const whileDown = { published: stream.published().length, buffered: recorder.buffered, failures: counted.failures };
    stream.state.mode = 'up';
    await jest.advanceTimersByTimeAsync(1_000);

    // The first full batch tried at once, then one attempt a second: no storm of retries.
    expect(whileDown).toEqual({ published: 0, buffered: 35, failures: 6 });
    expect(stream.published()).toEqual(records);
    expect(counted).toMatchObject({ published: 35, buffered: 0, dropped: { buffer_full: 0, shutdown: 0 } });
    await recorder.stop(1_000);
  });

  test('when the stream hangs and the buffer fills, then each further record is dropped and counted, at once, and the buffer stays bounded', async () => {
    const stream = aStream();
    const { recorder, counted } = aRecorder(stream.publish);
    stream.state.mode = 'hanging';

    for (let n = 0; n < 1_000; n += 1) recorder.record(aRecord());
    // At once: each record was kept or dropped within its own call, before any timer or promise could run.
    expect([recorder.buffered, recorder.dropped]).toEqual([100, 900]);
    await jest.advanceTimersByTimeAsync(10_000);
    for (let n = 0; n < 50; n += 1) recorder.record(aRecord());

    expect(recorder.buffered).toBe(100);
    expect(recorder.dropped).toBe(950);
    expect(counted.dropped.buffer_full).toBe(950);
    // One publish at a time: a hanging one is not joined by more.
    expect(stream.state.attempts).toBe(1);
  });

  test('when the replica stops, then what it holds is published, and what the stream cannot take by the deadline is counted as dropped', async () => {
    const stream = aStream();
    const { recorder } = aRecorder(stream.publish);
    for (let n = 0; n < 7; n += 1) recorder.record(aRecord());

    await recorder.stop(1_000);
    recorder.record(aRecord());

    expect(stream.published()).toHaveLength(7);
    expect(recorder.dropped).toBe(1);

    const away = aStream();
    away.state.mode = 'down';
    const second = aRecorder(away.publish);
    for (let n = 0; n < 4; n += 1) second.recorder.record(aRecord());
    await second.recorder.stop(1_000);

    expect(second.counted.dropped.shutdown).toBe(4);
    expect(second.recorder.buffered).toBe(0);
  });
});
