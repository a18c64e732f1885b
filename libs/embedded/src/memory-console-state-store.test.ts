import { describeConsoleStateStoreContract } from '@rsd/testkit';
import { createMemoryConsoleStateStore } from './memory-console-state-store';

describeConsoleStateStoreContract('memory', () => {
  const store = createMemoryConsoleStateStore();
  return Promise.resolve({ store, cleanup: () => store.close() });
});

describe('memory console state store', () => {
  test('beyond its bound, the least recently used record of a kind goes', async () => {
    const store = createMemoryConsoleStateStore(2);
    const record = { value: {}, createdAt: 0, lastSeenAt: 0, expiresAt: 1_000 };
    await store.put('session', 'a', record);
    await store.put('session', 'b', record);
    await store.touch('session', 'a', 1, 1_000);
    await store.put('session', 'c', record);
    await store.put('link', 'd', record);
    expect(await store.get('session', 'a', 0)).toBeDefined();
    expect(await store.get('session', 'b', 0)).toBeUndefined();
    expect(await store.get('session', 'c', 0)).toBeDefined();
    expect(await store.get('link', 'd', 0)).toBeDefined();
  });
});
