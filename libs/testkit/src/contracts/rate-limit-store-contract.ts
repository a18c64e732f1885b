import type { RateLimitStore, RateLimitStoreFactory } from '@rsd/ports';
import { uniqueName } from './eventually';
import { aFixturePerTest } from './per-test';

export interface RateLimitStoreFixture {
  stores: RateLimitStoreFactory;
  cleanup(): Promise<void>;
}

const WINDOW_MS = 60_000;

/** What every rate-limit store must do, in express-rate-limit's own Store terms. */
export function describeRateLimitStoreContract(name: string, factory: () => Promise<RateLimitStoreFixture>): void {
  describe(`RateLimitStore contract: ${name}`, () => {
    const created: RateLimitStore[] = [];
    // Declared before the fixture's: hooks run in the order declared, so the stores shut down before its cleanup.
    afterEach(async () => {
      for (const store of created.splice(0)) await store.shutdown?.();
    });
    const fixture = aFixturePerTest(factory);

    /** A store as express-rate-limit sets one up; only `windowMs` matters to a store. */
    async function aStore(): Promise<RateLimitStore> {
      const store = fixture.stores(uniqueName('contract'));
      created.push(store);
      await store.init?.({ windowMs: WINDOW_MS });
      return store;
    }

    async function hitsAfter(store: RateLimitStore, key: string, increments: number): Promise<number> {
      let totalHits = 0;
      for (let n = 0; n < increments; n += 1) totalHits = (await store.increment(key)).totalHits;
      return totalHits;
    }

    it('when a key is incremented, then its count goes up by one each time', async () => {
      const store = await aStore();
      const key = uniqueName('key');

      const counts = [];
      for (let n = 0; n < 3; n += 1) counts.push((await store.increment(key)).totalHits);

      expect(counts).toEqual([1, 2, 3]);
    });

    it('when two keys are incremented, then each has its own count', async () => {
      const store = await aStore();
      const [first, second] = [uniqueName('first'), uniqueName('second')];

      await hitsAfter(store, first, 3);

      expect(await hitsAfter(store, second, 1)).toBe(1);
      expect(await hitsAfter(store, first, 1)).toBe(4);
    });

    it('when a key is decremented, then the next increment counts one less', async () => {
      const store = await aStore();
      const key = uniqueName('key');
      await hitsAfter(store, key, 3);

      await store.decrement(key);

      expect(await hitsAfter(store, key, 1)).toBe(3);
    });

    it('when a key is reset, then it counts from one again and other keys keep their counts', async () => {
      const store = await aStore();
      const [reset, kept] = [uniqueName('reset'), uniqueName('kept')];
      await hitsAfter(store, reset, 3);
      await hitsAfter(store, kept, 2);

      await store.resetKey(reset);

      expect(await hitsAfter(store, reset, 1)).toBe(1);
      expect(await hitsAfter(store, kept, 1)).toBe(3);
    });

    it('when two stores come from the factory with different prefixes, then the same key counts apart', async () => {
      const [one, two] = [await aStore(), await aStore()];
      const key = uniqueName('shared-key');

      await hitsAfter(one, key, 3);

      expect(await hitsAfter(two, key, 1)).toBe(1);
      expect(await hitsAfter(one, key, 1)).toBe(4);
    });

    it('when a key is incremented, then its reset time is in the future and within the window', async () => {
      const store = await aStore();
      const before = Date.now();

      const { resetTime } = await store.increment(uniqueName('key'));

      expect(resetTime).toBeInstanceOf(Date);
      expect(resetTime?.getTime()).toBeGreaterThan(before);
      expect(resetTime?.getTime()).toBeLessThanOrEqual(Date.now() + WINDOW_MS);
    });
  });
}
