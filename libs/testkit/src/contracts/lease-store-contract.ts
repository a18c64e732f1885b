import type { LeaseStore } from '@rsd/ports';
import { uniqueName } from './eventually';
import { describeStoreContract, type StoreFixture } from './per-test';

export type LeaseStoreFixture = StoreFixture<LeaseStore>;

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

/** Decision 52: what every lease store must do; the keeper's safety rests on the claim being taken once. */
export function describeLeaseStoreContract(name: string, factory: () => Promise<LeaseStoreFixture>): void {
  describeStoreContract(`LeaseStore contract: ${name}`, factory, (store) => {
    it('when several replicas claim the same epoch at once, then exactly one gets it', async () => {
      const group = uniqueName('group');

      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, index) => store.claim(group, { name: 'shard-0', fence: 1, owner: `r${index}`, until: at(8_000) })),
      );

      expect(outcomes.filter(Boolean)).toHaveLength(1);
      const { latest } = await store.read(group, new Date(T0));
      expect(latest.get('shard-0')).toMatchObject({ fence: 1, owner: `r${outcomes.indexOf(true)}`, until: at(8_000) });
    });

    it('when a later epoch is claimed, then it is the newest, and the one before it can no longer be claimed', async () => {
      const group = uniqueName('group');
      await store.claim(group, { name: 'relay', fence: 1, owner: 'a', until: at(8_000) });

      expect(await store.claim(group, { name: 'relay', fence: 2, owner: 'b', until: at(16_000) })).toBe(true);
      expect(await store.claim(group, { name: 'relay', fence: 2, owner: 'c', until: at(16_000) })).toBe(false);

      const { latest } = await store.read(group, new Date(T0));
      expect(latest.get('relay')).toMatchObject({ fence: 2, owner: 'b' });
    });

    it('when its holder renews or releases an epoch, then its until moves; another owner cannot move it', async () => {
      const group = uniqueName('group');
      await store.claim(group, { name: 'relay', fence: 1, owner: 'a', until: at(8_000) });

      await store.renew(group, 'b', [{ name: 'relay', fence: 1 }], at(99_000));
      expect((await store.read(group, new Date(T0))).latest.get('relay')?.until).toBe(at(8_000));
      await store.renew(group, 'a', [{ name: 'relay', fence: 1 }], at(10_000));
      expect((await store.read(group, new Date(T0))).latest.get('relay')).toMatchObject({ until: at(10_000) });
      await store.renew(group, 'a', [{ name: 'relay', fence: 1 }], at(2_000), true);
      expect((await store.read(group, new Date(T0))).latest.get('relay')).toMatchObject({ until: at(2_000), released: true });
    });

    it('when replicas say they are alive, then those alive at a time are the members, and groups are apart', async () => {
      const group = uniqueName('group');
      await store.heartbeat(group, 'a', at(8_000));
      await store.heartbeat(group, 'b', at(3_000));
      await store.heartbeat(uniqueName('other'), 'c', at(8_000));

      expect((await store.read(group, new Date(T0 + 1_000))).members.sort()).toEqual(['a', 'b']);
      expect((await store.read(group, new Date(T0 + 5_000))).members).toEqual(['a']);
      await store.heartbeat(group, 'b', at(9_000));
      expect((await store.read(group, new Date(T0 + 5_000))).members.sort()).toEqual(['a', 'b']);
    });
  });
}
