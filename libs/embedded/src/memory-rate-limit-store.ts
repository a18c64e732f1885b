import { MemoryStore, type Options } from 'express-rate-limit';
import type { RateLimitStore, RateLimitStoreFactory } from '@rsd/ports';

/**
 * The embedded runtime's stores: counts in this process only, which is exactly its reach, with
 * express-rate-limit's own MemoryStore. Limiters with the same prefix count together, as they do on
 * Redis: the read API and the notifier share a credential's limit. Each limiter still gets a store
 * object of its own, because express-rate-limit refuses one store instance in two limiters.
 */
export function createMemoryRateLimitStores(): RateLimitStoreFactory {
  const shared = new Map<string, { store: MemoryStore; initialized: boolean }>();
  return (prefix) => {
    let entry = shared.get(prefix);
    if (!entry) {
      entry = { store: new MemoryStore(), initialized: false };
      shared.set(prefix, entry);
    }
    const counts = entry;
    const store: RateLimitStore = {
      // One window per prefix: the first limiter's options start the store's clock, the others share it.
      init: (options: Options) => {
        if (counts.initialized) return;
        counts.initialized = true;
        counts.store.init(options);
      },
      get: (key) => counts.store.get(key),
      increment: (key) => counts.store.increment(key),
      decrement: (key) => counts.store.decrement(key),
      resetKey: (key) => counts.store.resetKey(key),
      localKeys: true,
    };
    return store;
  };
}

/**
 * A store of its own for every limiter: for a service alone (its tests, the distributed runtime's
 * fallback while Redis is away).
 */
export const memoryRateLimitStores: RateLimitStoreFactory = () => new MemoryStore();
