import { describeRateLimitStoreContract, uniqueName } from '@rsd/testkit';
import { createMemoryRateLimitStores, memoryRateLimitStores } from './memory-rate-limit-store';

describeRateLimitStoreContract('memory', () => Promise.resolve({ stores: memoryRateLimitStores, cleanup: () => Promise.resolve() }));
describeRateLimitStoreContract('memory, shared by prefix', () =>
  Promise.resolve({ stores: createMemoryRateLimitStores(), cleanup: () => Promise.resolve() }),
);

describe('memory rate-limit stores', () => {
  it('when two limiters use the same prefix (the read API and the notifier), then they count together, as on Redis', async () => {
    const stores = createMemoryRateLimitStores();
    const prefix = uniqueName('rl:credential:');
    const [readApi, notifier] = [stores(prefix), stores(prefix)];
    for (const store of [readApi, notifier]) await store.init?.({ windowMs: 60_000 });

    await readApi.increment('rs_client');
    await readApi.increment('rs_client');

    expect((await notifier.increment('rs_client')).totalHits).toBe(3);
    expect(readApi).not.toBe(notifier);
  });
});
