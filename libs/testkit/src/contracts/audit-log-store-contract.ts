import type { AuditRecord } from '@rsd/contracts';
import type { AuditLogStore, AuditPosition } from '@rsd/ports';
import { anOrderedId } from './eventually';
import { describeStoreContract } from './per-test';
import { aUniqueClientId, aUniqueOrganizationId } from './port-fixtures';

export interface AuditLogStoreFixture {
  store: AuditLogStore;
  cleanup(): Promise<void>;
}

const NOW = Date.parse('2026-11-23T12:30:30.000Z');
/** An entry `agoMs` before the suite's now, of a fresh event; a person's change through the API unless told otherwise. */
export function anAuditRecord(organizationId: string, agoMs: number, overrides: Partial<AuditRecord> = {}): AuditRecord {
  const { id: eventId, sequence } = anOrderedId('event');
  return {
    eventId,
    organizationId,
    at: new Date(NOW - agoMs).toISOString(),
    action: 'authorization.created',
    actor: { type: 'person', id: 'https://idp.example|alice', via: 'api' },
    requestId: `req-${sequence}`,
    address: '203.0.113.5',
    clientId: aUniqueClientId(),
    ...overrides,
  };
}

/** What every audit-log store must do (decision 54): each event kept once, pages newest first, every filter held. */
export function describeAuditLogStoreContract(name: string, factory: () => Promise<AuditLogStoreFixture>): void {
  describeStoreContract(`AuditLogStore contract: ${name}`, factory, (store) => {
    const anOrganization = aUniqueOrganizationId;

    async function allPages(filter: Parameters<AuditLogStore['page']>[0], limit: number): Promise<AuditRecord[][]> {
      const pages: AuditRecord[][] = [];
      for (let after: AuditPosition | undefined; ;) {
        const page = await store.page(filter, { limit, ...(after ? { after } : {}) });
        if (page.length === 0) return pages;
        pages.push(page);
        const last = page.at(-1);
        after = last && { at: last.at, eventId: last.eventId };
      }
    }

    it('when entries of two organizations are added, then a page holds only the one asked for, newest first, exactly as added', async () => {
      const [mine, theirs] = [anOrganization(), anOrganization()];
      const older = anAuditRecord(mine, 5_000, {
        actor: { type: 'system', id: 'expiry-scheduler', via: null },
        requestId: null,
        address: null,
      });
      const other = anAuditRecord(theirs, 4_000);
      const newer = anAuditRecord(mine, 3_000, { action: 'authorization.revoked', clientId: null });

      await store.add([older, other]);
      await store.add([newer]);

      expect(await store.page({ organizationId: mine }, { limit: 10 })).toEqual([newer, older]);
    });

    it('when an event is added again, then it is kept once', async () => {
      const organizationId = anOrganization();
      const entry = anAuditRecord(organizationId, 1_000);

      await store.add([entry]);
      await store.add([entry, { ...entry, action: 'authorization.revoked' }]);

      expect(await store.page({ organizationId }, { limit: 10 })).toEqual([entry]);
    });

    it('when pages are read one after another, then each entry is on exactly one, in order, even among entries of one instant', async () => {
      const organizationId = anOrganization();
      const entries = Array.from({ length: 7 }, (_, n) => anAuditRecord(organizationId, n < 4 ? 2_000 : 1_000 + n));
      await store.add(entries);

      const pages = await allPages({ organizationId }, 3);

      expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
      const expected = [...entries].sort((a, b) => (a.at === b.at ? (a.eventId < b.eventId ? 1 : -1) : a.at < b.at ? 1 : -1));
      expect(pages.flat()).toEqual(expected);
    });

    it('when filters are given, then every one holds: from (at or after), to (before), actor by id or type, action, Client ID', async () => {
      const organizationId = anOrganization();
      const clientId = aUniqueClientId();
      const service = { type: 'service', id: 'https://idp.example|ci-bot', via: 'cli' } as const;
      const early = anAuditRecord(organizationId, 10_000, { clientId });
      const middle = anAuditRecord(organizationId, 6_000, { actor: service, action: 'authorization.revoked', clientId });
      const late = anAuditRecord(organizationId, 2_000, { actor: service });
      await store.add([early, middle, late]);
      const page = (filter: Omit<Parameters<AuditLogStore['page']>[0], 'organizationId'>) =>
        store.page({ organizationId, ...filter }, { limit: 10 });

      expect(await page({ from: middle.at })).toEqual([late, middle]);
      expect(await page({ to: middle.at })).toEqual([early]);
      expect(await page({ from: early.at, to: late.at })).toEqual([middle, early]);
      expect(await page({ actor: service.id })).toEqual([late, middle]);
      expect(await page({ actor: 'service' })).toEqual([late, middle]);
      expect(await page({ actor: 'person' })).toEqual([early]);
      expect(await page({ action: 'authorization.revoked' })).toEqual([middle]);
      expect(await page({ clientId })).toEqual([middle, early]);
      expect(await page({ clientId, actor: 'service', action: 'authorization.revoked' })).toEqual([middle]);
      expect(await store.page({ organizationId, actor: 'person' }, { limit: 10, after: { at: late.at, eventId: late.eventId } })).toEqual([
        early,
      ]);
    });

    it('when an organization is purged (decision 56), then none of its entries is left and another organization keeps its own', async () => {
      const [offboarded, staying] = [anOrganization(), anOrganization()];
      const kept = anAuditRecord(staying, 2_000);
      await store.add([anAuditRecord(offboarded, 3_000), anAuditRecord(offboarded, 1_000), kept]);

      await store.purgeOrganization(offboarded);
      await store.purgeOrganization(offboarded);

      expect(await store.page({ organizationId: offboarded }, { limit: 10 })).toEqual([]);
      expect(await store.page({ organizationId: staying }, { limit: 10 })).toEqual([kept]);
    });

    it("when a recipient's addresses are erased (decision 56), then its grant's entries keep everything but the address", async () => {
      const organizationId = anOrganization();
      const clientId = aUniqueClientId();
      const mine = anAuditRecord(organizationId, 3_000, { clientId });
      const other = anAuditRecord(organizationId, 1_000);
      await store.add([mine, other]);

      await store.eraseAddresses(organizationId, clientId);
      await store.eraseAddresses(organizationId, clientId);

      expect(await store.page({ organizationId }, { limit: 10 })).toEqual([other, { ...mine, address: null }]);
    });

    it('when the trail is pruned before an instant (decision 56), then older entries of every organization are gone and the rest stay', async () => {
      const [one, another] = [anOrganization(), anOrganization()];
      const DAY = 86_400_000;
      const kept = [anAuditRecord(one, 399 * DAY), anAuditRecord(another, 400 * DAY)];
      await store.add([anAuditRecord(one, 401 * DAY), anAuditRecord(another, 400 * DAY + 1), ...kept]);

      await store.prune(new Date(NOW - 400 * DAY));

      expect(await store.page({ organizationId: one }, { limit: 10 })).toEqual([kept[0]]);
      expect(await store.page({ organizationId: another }, { limit: 10 })).toEqual([kept[1]]);
    });
  });
}
