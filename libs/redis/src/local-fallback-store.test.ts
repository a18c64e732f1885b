import { MemoryStore, type Options } from 'express-rate-limit';
import pino from 'pino';
import type { RateLimitStore, RateLimitStoreFactory } from '@rsd/ports';
import { capturedLog, describeRateLimitStoreContract } from '@rsd/testkit';
import { withLocalFallback } from './local-fallback-store';

type InitOptions = Parameters<NonNullable<RateLimitStore['init']>>[0];
const WINDOW = { windowMs: 60_000 } as InitOptions;

/** A shared store that can be taken away and brought back: a MemoryStore behind a switch. */
function switchableStores() {
  const state = { down: false };
  const unavailable = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
  const stores: RateLimitStoreFactory = () => {
    const shared = new MemoryStore();
    return {
      init: (options) => (state.down ? unavailable() : shared.init(options as Options)),
      get: (key) => (state.down ? unavailable() : shared.get(key)),
      increment: (key) => (state.down ? unavailable() : shared.increment(key)),
      decrement: (key) => (state.down ? unavailable() : shared.decrement(key)),
      resetKey: (key) => (state.down ? unavailable() : shared.resetKey(key)),
      shutdown: () => shared.shutdown(),
    };
  };
  return { stores, state };
}

const localStores: RateLimitStoreFactory = () => new MemoryStore();

async function aStore(factory: RateLimitStoreFactory, prefix = 'rl:test:'): Promise<RateLimitStore> {
  const store = factory(prefix);
  await store.init?.(WINDOW);
  return store;
}

async function hitsAfter(store: RateLimitStore, key: string, increments: number): Promise<number> {
  let totalHits = 0;
  for (let n = 0; n < increments; n += 1) totalHits = (await store.increment(key)).totalHits;
  return totalHits;
}

describe('withLocalFallback', () => {
  const stopped: RateLimitStore[] = [];
  afterEach(async () => {
    for (const store of stopped.splice(0)) await store.shutdown?.();
  });

  /** A store whose shared store the test switches, with what it logged and reported. */
  async function aWatchedStore() {
    const { stores, state } = switchableStores();
    const { log, entries } = capturedLog();
    const reports: boolean[] = [];
    const store = await aStore(withLocalFallback(stores, localStores, { log, onFallback: (active) => reports.push(active) }));
    stopped.push(store);
    return { store, state, reports, levels: () => entries().map((entry) => entry.level) };
  }

  describeRateLimitStoreContract('withLocalFallback while the shared store is down', () => {
    const { stores, state } = switchableStores();
    state.down = true;
    return Promise.resolve({
      stores: withLocalFallback(stores, localStores, { log: pino({ level: 'silent' }) }),
      cleanup: () => Promise.resolve(),
    });
  });

  it('when the shared store fails, then this replica counts the calls and the switch is reported once', async () => {
    const { store, state, reports, levels } = await aWatchedStore();

    state.down = true;
    const counts = [];
    for (let n = 0; n < 4; n += 1) counts.push((await store.increment('client')).totalHits);

    expect(counts).toEqual([1, 2, 3, 4]);
    expect(reports).toEqual([true]);
    expect(levels().filter((level) => level === 40)).toHaveLength(1);
  });

  it('when the shared store answers again, then counting goes back to it and the return is reported once', async () => {
    const { store, state, reports, levels } = await aWatchedStore();
    await hitsAfter(store, 'client', 5);
    state.down = true;
    await hitsAfter(store, 'client', 2);

    state.down = false;
    const afterRecovery = await hitsAfter(store, 'client', 2);

    expect(afterRecovery).toBe(7);
    expect(reports).toEqual([true, false]);
    expect(levels()).toEqual([40, 30]);
  });

  it('when the shared store is down at init, then init still succeeds and the replica counts alone', async () => {
    const { stores, state } = switchableStores();
    const reports: boolean[] = [];
    state.down = true;
    const factory = withLocalFallback(stores, localStores, {
      log: pino({ level: 'silent' }),
      onFallback: (active) => reports.push(active),
    });

    const store = await aStore(factory);
    stopped.push(store);

    expect(await hitsAfter(store, 'client', 3)).toBe(3);
    expect(reports).toEqual([true]);
  });

  it('when the stores of several limiters fail, then the outage is reported once for all of them', async () => {
    const { stores, state } = switchableStores();
    const reports: boolean[] = [];
    const factory = withLocalFallback(stores, localStores, {
      log: pino({ level: 'silent' }),
      onFallback: (active) => reports.push(active),
    });
    const [credential, failedAuth] = [await aStore(factory, 'rl:credential:'), await aStore(factory, 'rl:failed-auth:')];
    stopped.push(credential, failedAuth);

    state.down = true;
    await credential.increment('client');
    await failedAuth.increment('127.0.0.1');

    expect(reports).toEqual([true]);
  });

  it('when a key is reset, then it is forgotten by this replica too, so a later outage starts it from one', async () => {
    const { stores, state } = switchableStores();
    const store = await aStore(withLocalFallback(stores, localStores, { log: pino({ level: 'silent' }) }));
    stopped.push(store);
    state.down = true;
    await hitsAfter(store, 'client', 3);
    state.down = false;

    await store.resetKey('client');
    state.down = true;

    expect(await hitsAfter(store, 'client', 1)).toBe(1);
  });

  it('when built for a limiter, then the store names its prefix and reports keys as shared like the shared store', () => {
    const { stores } = switchableStores();

    const store = withLocalFallback(stores, localStores, { log: pino({ level: 'silent' }) })('rl:credential:');

    expect(store.prefix).toBe('rl:credential:');
    expect(store.localKeys).toBe(false);
  });
});
