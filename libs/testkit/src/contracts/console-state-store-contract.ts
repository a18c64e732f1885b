import type { ConsoleStateRecord, ConsoleStateStore } from '@rsd/ports';
import { uniqueName } from './eventually';
import { describeStoreContract } from './per-test';

export interface ConsoleStateStoreFixture {
  store: ConsoleStateStore;
  cleanup(): Promise<void>;
}

const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const MINUTE = 60_000;

const aRecord = (overrides: Partial<ConsoleStateRecord> = {}): ConsoleStateRecord => ({
  value: { organizationId: 'acme', subject: 'person@acme.example', displayName: 'A "quoted" name & <more>' },
  createdAt: NOW,
  lastSeenAt: NOW,
  expiresAt: NOW + 30 * MINUTE,
  ...overrides,
});

/** The console's state (decision 31) behaves the same in memory and in MongoDB. */
export function describeConsoleStateStoreContract(name: string, open: () => Promise<ConsoleStateStoreFixture>): void {
  describeStoreContract(`ConsoleStateStore contract: ${name}`, open, (store) => {
    const aKey = () => uniqueName('digest');

    test('a record put is read back as it was, until the instant it expires', async () => {
      const key = aKey();
      await store.put('session', key, aRecord());
      expect(await store.get('session', key, NOW)).toEqual(aRecord());
      expect(await store.get('session', key, NOW + 30 * MINUTE - 1)).toEqual(aRecord());
      expect(await store.get('session', key, NOW + 30 * MINUTE)).toBeUndefined();
      expect(await store.get('session', aKey(), NOW)).toBeUndefined();
    });

    test('kinds are apart: the same key as a link is not a session', async () => {
      const key = aKey();
      await store.put('link', key, aRecord());
      expect(await store.get('session', key, NOW)).toBeUndefined();
      expect(await store.take('attempt', key, NOW)).toBeUndefined();
      expect(await store.get('link', key, NOW)).toEqual(aRecord());
    });

    test('take answers a record once, and an expired one never', async () => {
      const key = aKey();
      await store.put('link', key, aRecord());
      expect(await store.take('link', key, NOW + MINUTE)).toEqual(aRecord());
      expect(await store.take('link', key, NOW + MINUTE)).toBeUndefined();
      expect(await store.get('link', key, NOW + MINUTE)).toBeUndefined();

      const expired = aKey();
      await store.put('attempt', expired, aRecord({ expiresAt: NOW + MINUTE }));
      expect(await store.take('attempt', expired, NOW + MINUTE)).toBeUndefined();
      expect(await store.take('attempt', expired, NOW)).toBeUndefined();
    });

    test('of concurrent takes of one record, exactly one gets it (20 records, 8 takers each)', async () => {
      const winners = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const key = aKey();
          await store.put('attempt', key, aRecord());
          const taken = await Promise.all(Array.from({ length: 8 }, () => store.take('attempt', key, NOW)));
          return taken.filter((record) => record !== undefined).length;
        }),
      );
      expect(winners).toEqual(Array.from({ length: 20 }, () => 1));
    });

    test('touch moves a record last use and its end, and brings back nothing that is gone', async () => {
      const key = aKey();
      await store.put('session', key, aRecord());
      await store.touch('session', key, NOW + 20 * MINUTE, NOW + 50 * MINUTE);
      expect(await store.get('session', key, NOW + 40 * MINUTE)).toEqual(
        aRecord({ lastSeenAt: NOW + 20 * MINUTE, expiresAt: NOW + 50 * MINUTE }),
      );

      const gone = aKey();
      await store.touch('session', gone, NOW, NOW + 50 * MINUTE);
      expect(await store.get('session', gone, NOW)).toBeUndefined();
    });

    test('delete removes a record; putting the same key again replaces it', async () => {
      const key = aKey();
      await store.put('session', key, aRecord());
      await store.put('session', key, aRecord({ value: { organizationId: 'other' } }));
      expect((await store.get('session', key, NOW))?.value).toEqual({ organizationId: 'other' });
      await store.delete('session', key);
      expect(await store.get('session', key, NOW)).toBeUndefined();
      await store.delete('session', key);
    });
  });
}
