import { ConsumerCore, isInsideHandler, type ConsumerCoreOptions } from './consumer-core';
import type { EventRecord } from '@rsd/ports';
import { useFakeTimersFromZero } from '@rsd/testkit';

const aRecord = (offset: number): EventRecord => ({ topic: 't', partition: 0, offset: String(offset), key: 'k', value: '{}' });

/** A core over a source that records what the core asks of it. */
function aCore(handle: ConsumerCoreOptions['handle'], overrides: Partial<ConsumerCoreOptions> = {}) {
  const committed: string[] = [];
  const errors: string[] = [];
  const stops = { count: 0 };
  const core = new ConsumerCore({
    groupId: 'g',
    handle,
    commit: (record) => {
      committed.push(record.offset);
      return Promise.resolve();
    },
    stop: () => {
      stops.count += 1;
      return Promise.resolve();
    },
    log: { error: (_, message) => errors.push(message) },
    ...overrides,
  });
  return { core, committed, errors, stops };
}

async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let n = 0; n < 10; n += 1) await Promise.resolve();
  return settled;
}

/** A handler that fails `failures` times, then succeeds; it notes the fake time of each call. */
function failingTimes(failures: number) {
  const calls: number[] = [];
  const handle = () => {
    calls.push(Date.now());
    return calls.length <= failures ? Promise.reject(new Error('a passing fault')) : Promise.resolve();
  };
  return { calls, handle };
}

describe('ConsumerCore', () => {
  useFakeTimersFromZero();

  it('when a handler fails twice then succeeds, then it is called three times, 100 and 200 ms apart, and the position is committed only after the success', async () => {
    const { calls, handle } = failingTimes(2);
    const { core, committed, errors } = aCore(handle);

    const delivered = core.deliver(aRecord(7));
    await jest.advanceTimersByTimeAsync(299);
    const committedBeforeSuccess = [...committed];
    await jest.advanceTimersByTimeAsync(1);

    expect(await delivered).toBe(true);
    expect(calls).toEqual([0, 100, 300]);
    expect(committedBeforeSuccess).toEqual([]);
    expect(committed).toEqual(['7']);
    expect(errors).toEqual(['event handler failed; retrying the record', 'event handler failed; retrying the record']);
  });

  it('when records arrive as a batch, then the batch handler takes them together, a failure hands them all over again, and only the last is committed, after the success', async () => {
    const batches: string[][] = [];
    const { core, committed, errors } = aCore(() => Promise.reject(new Error('single records are not expected')), {
      handleBatch: (records) => {
        batches.push(records.map((record) => record.offset));
        return batches.length === 1 ? Promise.reject(new Error('a passing fault')) : Promise.resolve();
      },
    });

    const delivered = core.deliverBatch([aRecord(3), aRecord(4), aRecord(5)]);
    await jest.advanceTimersByTimeAsync(100);

    expect(await delivered).toBe(true);
    expect(batches).toEqual([
      ['3', '4', '5'],
      ['3', '4', '5'],
    ]);
    expect(committed).toEqual(['5']);
    expect(errors).toEqual(['event handler failed; retrying the records']);
  });

  it('when a batch arrives and the consumer handles single records only, then each is handled in order before the last is committed', async () => {
    const handled: string[] = [];
    const { core, committed } = aCore((record) => {
      handled.push(record.offset);
      return Promise.resolve();
    });

    expect(await core.deliverBatch([aRecord(1), aRecord(2)])).toBe(true);
    expect(handled).toEqual(['1', '2']);
    expect(committed).toEqual(['2']);
  });

  it('when a handler keeps failing, then the pauses double from 100 ms and stay at 5 s, and beforeRetry runs before every new attempt', async () => {
    const { calls, handle } = failingTimes(9);
    const heartbeats: number[] = [];
    const { core } = aCore(handle);

    const delivered = core.deliver(aRecord(0), () => {
      heartbeats.push(Date.now());
      return Promise.resolve();
    });
    await jest.advanceTimersByTimeAsync(60_000);

    expect(await delivered).toBe(true);
    const pauses = calls.slice(1).map((at, n) => at - (calls[n] ?? 0));
    expect(pauses).toEqual([100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000]);
    expect(heartbeats).toEqual(calls.slice(1));
  });

  it('when the subscription closes during a retry pause, then close ends without waiting for the pause and nothing is committed', async () => {
    const { calls, handle } = failingTimes(Number.POSITIVE_INFINITY);
    const { core, committed, stops } = aCore(handle);
    const delivered = core.deliver(aRecord(0));
    await jest.advanceTimersByTimeAsync(150);

    const closed = core.close();

    expect(await isSettled(closed)).toBe(true);
    expect(await isSettled(delivered)).toBe(true);
    expect(await delivered).toBe(false);
    expect(calls).toHaveLength(2);
    expect(committed).toEqual([]);
    expect(stops.count).toBe(1);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('when close is called twice, then the source is stopped once and both calls wait for it', async () => {
    let finishStop: () => void = () => undefined;
    const { core, stops } = aCore(() => Promise.resolve(), {
      stop: () => {
        stops.count += 1;
        return new Promise((resolve) => (finishStop = resolve));
      },
    });

    const first = core.close();
    const second = core.close();
    const settledBeforeStop = await isSettled(Promise.race([first, second]));
    finishStop();

    expect(settledBeforeStop).toBe(false);
    await expect(Promise.all([first, second])).resolves.toEqual([undefined, undefined]);
    expect(stops.count).toBe(1);
    expect(core.closed).toBe(true);
  });

  it('when the subscription is closed, then a delivery handles nothing and reports false', async () => {
    const handled: string[] = [];
    const { core, committed } = aCore((record) => {
      handled.push(record.offset);
      return Promise.resolve();
    });
    await core.close();

    expect(await core.deliver(aRecord(1))).toBe(false);
    expect(handled).toEqual([]);
    expect(committed).toEqual([]);
  });

  it('when the source reports it caught up, then caughtUp resolves, and not before', async () => {
    const { core } = aCore(() => Promise.resolve());
    const before = await isSettled(core.caughtUp);

    core.reportCaughtUp();

    expect(before).toBe(false);
    expect(await isSettled(core.caughtUp)).toBe(true);
  });

  it('when the subscription closes before catching up, then waiting for caughtUp ends', async () => {
    const { core } = aCore(() => Promise.resolve());

    await core.close();

    expect(await isSettled(core.caughtUp)).toBe(true);
  });

  it('when a handler closes its own subscription, then close does not wait for that handler to return', async () => {
    let finishStop: () => void = () => undefined;
    let closedInside: Promise<void> = Promise.resolve();
    const { core } = aCore(
      async () => {
        closedInside = core.close();
        await closedInside;
      },
      { stop: () => new Promise((resolve) => (finishStop = resolve)) },
    );

    const delivered = core.deliver(aRecord(0));

    expect(await isSettled(closedInside)).toBe(true);
    expect(await delivered).toBe(true);
    const outside = core.close();
    expect(await isSettled(outside)).toBe(false);
    finishStop();
    await outside;
  });

  it('when code runs inside a handler, then isInsideHandler says so, and outside it does not', async () => {
    const seen: boolean[] = [];
    const { core } = aCore(async () => {
      await Promise.resolve();
      seen.push(isInsideHandler());
    });

    await core.deliver(aRecord(0));

    expect(seen).toEqual([true]);
    expect(isInsideHandler()).toBe(false);
  });

  it('when beforeRetry throws, then the delivery ends with that error and the record is not committed', async () => {
    const { handle } = failingTimes(1);
    const { core, committed } = aCore(handle);

    const delivered = core.deliver(aRecord(0), () => Promise.reject(new Error('rebalancing')));
    const outcome = expect(delivered).rejects.toThrow('rebalancing');
    await jest.advanceTimersByTimeAsync(100);

    await outcome;
    expect(committed).toEqual([]);
  });

  it('when the commit fails, then the delivery ends with that error and the handler is not run again', async () => {
    const handled: string[] = [];
    const { core } = aCore(
      (record) => {
        handled.push(record.offset);
        return Promise.resolve();
      },
      { commit: () => Promise.reject(new Error('commit refused')) },
    );

    await expect(core.deliver(aRecord(3))).rejects.toThrow('commit refused');
    expect(handled).toEqual(['3']);
  });

  it('when the handler is given a record, then it gets a copy the source cannot see changed', async () => {
    const record = aRecord(0);
    const { core } = aCore((given) => {
      given.value = 'changed';
      return Promise.resolve();
    });

    await core.deliver(record);

    expect(record.value).toBe('{}');
  });
});
