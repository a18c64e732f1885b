import { startedOffboarding } from '@rsd/domain';
import type { OffboardingStore } from '@rsd/ports';
import { describeStoreContract } from './per-test';
import { aUniqueOrganizationId } from './port-fixtures';

export interface OffboardingStoreFixture {
  store: OffboardingStore;
  cleanup(): Promise<void>;
}

const START = new Date('2026-12-02T10:00:00.000Z');
const at = (seconds: number) => new Date(START.getTime() + seconds * 1000);
const DAY_MS = 86_400_000;

/** What every offboarding store must do (decision 56): one record per organization, each service's purge once, done when all have, kept 30 days. */
export function describeOffboardingStoreContract(name: string, factory: () => Promise<OffboardingStoreFixture>): void {
  describeStoreContract(`OffboardingStore contract: ${name}`, factory, (store) => {
    const anOrganization = aUniqueOrganizationId;

    it('when an offboarding starts, then it is pending, and starting it again keeps the first', async () => {
      const organizationId = anOrganization();
      const first = startedOffboarding(organizationId, START);

      expect(await store.start(first, START)).toEqual(first);
      expect(await store.start(startedOffboarding(organizationId, at(60)), at(60))).toEqual(first);
      expect(await store.find(organizationId, at(61))).toEqual(first);
      expect(await store.find(anOrganization(), at(61))).toBeUndefined();
    });

    it('when every service has purged, then it is done at the last purge; a purge told again changes nothing', async () => {
      const organizationId = anOrganization();
      await store.start(startedOffboarding(organizationId, START), START);

      await store.recordPurge(organizationId, 'notifier', at(2));
      await store.recordPurge(organizationId, 'credentials', at(1));
      expect((await store.find(organizationId, at(3)))?.doneAt).toBeNull();
      await store.recordPurge(organizationId, 'read-api', at(3));
      await store.recordPurge(organizationId, 'notifier', at(9));

      const done = await store.find(organizationId, at(10));
      expect(done?.doneAt).toBe(at(3).toISOString());
      expect(done?.purgedBy).toEqual({ credentials: at(1).toISOString(), notifier: at(2).toISOString(), 'read-api': at(3).toISOString() });
      expect(done?.expiresAt).toBe(new Date(at(3).getTime() + 30 * DAY_MS).toISOString());
    });

    it('when purges are told at once, then each is kept', async () => {
      const organizationId = anOrganization();
      await store.start(startedOffboarding(organizationId, START), START);

      await Promise.all([
        store.recordPurge(organizationId, 'credentials', at(1)),
        store.recordPurge(organizationId, 'read-api', at(1)),
        store.recordPurge(organizationId, 'notifier', at(1)),
      ]);

      expect((await store.find(organizationId, at(2)))?.doneAt).toBe(at(1).toISOString());
    });

    it('when a purge is told for an organization with no offboarding, then nothing is kept', async () => {
      const organizationId = anOrganization();

      expect(await store.recordPurge(organizationId, 'read-api', at(1))).toBeUndefined();
      expect(await store.find(organizationId, at(2))).toBeUndefined();
    });

    it('when 30 days have passed since it was done, then the record is gone and a new offboarding starts afresh; a pending one never expires', async () => {
      const [done, pending] = [anOrganization(), anOrganization()];
      for (const organizationId of [done, pending]) await store.start(startedOffboarding(organizationId, START), START);
      for (const service of ['credentials', 'read-api', 'notifier'] as const) await store.recordPurge(done, service, at(1));
      const expiry = new Date(at(1).getTime() + 30 * DAY_MS);

      expect(await store.find(done, new Date(expiry.getTime() - 1))).toBeDefined();
      expect(await store.find(done, expiry)).toBeUndefined();
      expect(await store.find(pending, new Date(expiry.getTime() + 365 * DAY_MS))).toBeDefined();
      const again = startedOffboarding(done, expiry);
      expect(await store.start(again, expiry)).toEqual(again);
      expect(await store.find(done, expiry)).toEqual(again);
    });
  });
}
