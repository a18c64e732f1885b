import { EVENT_TYPES, type AuthorizationCreated, type DomainEvent } from '@rsd/contracts';
import { projectEvents } from '@rsd/consumers';
import { READ_VIEWS, type RecipientAccountView } from '@rsd/domain';
import { createMemoryViewStore } from '@rsd/embedded';
import type { ViewStore } from '@rsd/ports';
import { anEvent, authorizationCreatedEvent, authorizationRevokedEvent, scoreCalculatedEvent } from '@rsd/testkit';
import { customersPage, pillarsPage, scoresPage } from './portfolio-pages';
import { cursorAfter } from '@rsd/recipient-access';

const NOW = new Date('2026-11-20T12:00:00.000Z');
const ACCOUNT: RecipientAccountView & { keyDigest: string } = {
  accountId: 'rcp_AAAAAAAAAAAAAAAAAAAAAAAA',
  name: 'Book',
  keyDigest: 'a'.repeat(64),
  previousKeyDigest: null,
  previousKeyExpiresAt: null,
  revision: 1,
};

/** The store beneath, with every call counted by method: what a page costs in lookups. */
function counted(store: ViewStore) {
  const calls = { get: 0, getMany: 0, list: 0 };
  const wrapped: ViewStore = {
    get: (view, key) => ((calls.get += 1), store.get(view, key)),
    getMany: (view, keys) => ((calls.getMany += 1), store.getMany(view, keys)),
    list: (view, partition, range) => ((calls.list += 1), store.list(view, partition, range)),
    put: (view, key, state) => store.put(view, key, state),
    purgeOrganization: (view, organizationId) => store.purgeOrganization(view, organizationId),
    close: () => store.close(),
  };
  return { store: wrapped, calls };
}

/** `count` grants of as many organizations, each with a score, granted to the account. */
async function aPortfolio(count: number, options: { scopes?: AuthorizationCreated['data']['scopes'] } = {}) {
  const store = createMemoryViewStore();
  const events: DomainEvent[] = [];
  const grants: AuthorizationCreated[] = [];
  for (let i = 0; i < count; i += 1) {
    const { event } = authorizationCreatedEvent({ organizationId: `org-${i}`, scopes: options.scopes });
    const granted = { ...event, data: { ...event.data, keyDigest: null, recipientAccountId: ACCOUNT.accountId } };
    grants.push(granted);
    events.push(granted, scoreCalculatedEvent({ organizationId: `org-${i}`, score: i % 100 }));
  }
  events.push(
    anEvent(
      EVENT_TYPES.recipientAccountCreated,
      {
        accountId: ACCOUNT.accountId,
        name: ACCOUNT.name,
        keyDigest: ACCOUNT.keyDigest,
        createdAt: NOW.toISOString(),
        revision: 1,
      },
      { time: NOW },
    ),
  );
  await projectEvents(store, READ_VIEWS, events);
  return { store, grants };
}

describe('portfolio pages (decision 42)', () => {
  test('when a page of 100 scores is read, then it costs one list and two lookups of many, whatever the page size', async () => {
    for (const size of [1, 10, 100]) {
      const { store } = await aPortfolio(size);
      const { store: countedStore, calls } = counted(store);

      const page = await scoresPage(countedStore, { account: ACCOUNT, clientAddress: '127.0.0.1', now: NOW }, { limit: 100 });

      expect(page.items).toHaveLength(size);
      expect(calls).toEqual({ get: 0, getMany: 2, list: 1 });
    }
  });

  test('when the pages are followed, then every grant comes once, in Client ID order, and a revoked one is left out', async () => {
    const { store, grants } = await aPortfolio(25);
    const revoked = grants[7]!;
    await projectEvents(store, READ_VIEWS, [authorizationRevokedEvent(revoked.data)]);

    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await customersPage(store, { account: ACCOUNT, clientAddress: undefined, now: NOW }, { limit: 10, after });
      seen.push(...page.items.map((item) => item.clientId));
      if (page.nextCursor === null) break;
      after = Buffer.from(page.nextCursor, 'base64url').toString('utf8').slice(3);
      expect(page.nextCursor).toBe(cursorAfter(after));
    }

    const expected = grants.map((grant) => grant.data.clientId).filter((clientId) => clientId !== revoked.data.clientId);
    expect(seen).toEqual(expected.sort().reverse());
  });

  test('when a grant lacks the scope, has expired by its time, or admits other addresses only, then its score is not on the page', async () => {
    const { store, grants } = await aPortfolio(3, { scopes: ['qr_score'] });
    const { event: pillarsOnly } = authorizationCreatedEvent({ organizationId: 'org-0', scopes: ['pillar_breakdown'] });
    const { event: expired } = authorizationCreatedEvent({ organizationId: 'org-1', expiresAt: '2026-11-20T00:00:00.000Z' });
    const { event: elsewhere } = authorizationCreatedEvent({ organizationId: 'org-2', allowedCidrs: ['203.0.113.0/24'] });
    const held = (event: AuthorizationCreated) => ({
      ...event,
      data: { ...event.data, keyDigest: null, recipientAccountId: ACCOUNT.accountId },
    });
    await projectEvents(store, READ_VIEWS, [held(pillarsOnly), held(expired), held(elsewhere)]);

    const page = await scoresPage(store, { account: ACCOUNT, clientAddress: '198.51.100.7', now: NOW }, { limit: 100 });

    expect(page.items.map((item) => item.clientId).sort()).toEqual(grants.map((grant) => grant.data.clientId).sort());
    // Of these, only the address is counted: the scope and the expiry are not the address's doing.
    expect(page.leftOut).toEqual({ addressNotAllowed: 1 });
  });

  test("when grants admit other addresses only, then every page leaves them out and counts them; read from inside one's ranges, that one is listed and not counted", async () => {
    const { store, grants } = await aPortfolio(2, { scopes: ['qr_score', 'pillar_breakdown'] });
    const limited = ['203.0.113.0/24', '198.51.100.0/24'].map((range, i) => {
      const { event } = authorizationCreatedEvent({
        organizationId: `org-${i}`,
        scopes: ['qr_score', 'pillar_breakdown'],
        allowedCidrs: [range],
      });
      return { ...event, data: { ...event.data, keyDigest: null, recipientAccountId: ACCOUNT.accountId } };
    });
    await projectEvents(store, READ_VIEWS, limited);
    const open = grants.map((grant) => grant.data.clientId).sort();
    const from = (clientAddress: string | undefined) => ({ account: ACCOUNT, clientAddress, now: NOW });
    const ids = (page: { items: { clientId: string }[] }) => page.items.map((item) => item.clientId).sort();

    for (const read of [customersPage, scoresPage, pillarsPage]) {
      const outside = await read(store, from('192.0.2.1'), { limit: 100 });
      const inOne = await read(store, from('::ffff:198.51.100.7'), { limit: 100 });
      const unknown = await read(store, from(undefined), { limit: 100 });

      expect([ids(outside), outside.leftOut]).toEqual([open, { addressNotAllowed: 2 }]);
      expect([ids(inOne), inOne.leftOut]).toEqual([[...open, limited[1]!.data.clientId].sort(), { addressNotAllowed: 1 }]);
      expect(unknown.leftOut).toEqual({ addressNotAllowed: 2 });
    }
    // A page counts the grants of its own range only.
    const first = await customersPage(store, from('192.0.2.1'), { limit: 2 });
    // The next page starts where this one's range ended (its cursor), not after its last listed item: a grant left
    // out at the end of a range is counted by that page only.
    const endedAt = Buffer.from(first.nextCursor ?? '', 'base64url')
      .toString('utf8')
      .replace(/^v1:/, '');
    const second = await customersPage(store, from('192.0.2.1'), { limit: 2, after: endedAt });
    expect(first.leftOut.addressNotAllowed + second.leftOut.addressNotAllowed).toBe(2);
  });
});
