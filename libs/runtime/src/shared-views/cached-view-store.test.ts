import type { DomainEvent } from '@rsd/contracts';
import { READ_VIEWS, credentialView, currentScoreView } from '@rsd/domain';
import { createMemoryViewStore } from '@rsd/embedded';
import { type ViewStore } from '@rsd/ports';
import { projectEvent } from '@rsd/consumers';
import { authorizationCreatedEvent, authorizationExpiredEvent, authorizationRevokedEvent, scoreCalculatedEvent } from '@rsd/testkit';
import { createCachedViewStore } from './cached-view-store';

function setUp(maxEntries = 100) {
  let time = 1_000_000;
  const store = createMemoryViewStore();
  let reads = 0;
  const counted: ViewStore = {
    ...store,
    get: (view, key) => {
      reads += 1;
      return store.get(view, key);
    },
  };
  const cached = createCachedViewStore(counted, READ_VIEWS, { ttlMs: 30_000, overlayRetentionMs: 600_000, maxEntries, now: () => time });
  return {
    cached,
    /** What the shared projection writes into the store beneath the cache. */
    projected: (event: DomainEvent) => projectEvent(store, READ_VIEWS, event),
    reads: () => reads,
    advance: (ms: number) => (time += ms),
  };
}

const { event: created } = authorizationCreatedEvent();
const { clientId } = created.data;
const revoked = authorizationRevokedEvent(created.data);

describe('cached view store', () => {
  test('when a document was read within the ttl, then it is served without another store read', async () => {
    const { cached, projected, reads } = setUp();
    await projected(created);

    await cached.get(credentialView, clientId);
    await cached.get(credentialView, clientId);

    expect(reads()).toBe(1);
  });

  test('when a document is read again under the same events, then the same answer comes back without applying them again', async () => {
    const { cached, projected } = setUp();
    await projected(created);
    let applied = 0;
    const counting: typeof credentialView = {
      ...credentialView,
      evolve: (state, event) => ((applied += 1), credentialView.evolve(state, event)),
    };
    cached.observe(created);

    const first = await cached.get(counting, clientId);
    const again = await cached.get(counting, clientId);
    cached.observe(revoked);
    const afterRevocation = await cached.get(counting, clientId);

    expect(again).toBe(first);
    expect(applied).toBe(1 + 2);
    expect(afterRevocation).toMatchObject({ status: 'revoked', revision: 2 });
  });

  test('when the feed sees a revocation, then a cached active credential is served revoked at once', async () => {
    const { cached, projected } = setUp();
    await projected(created);
    expect((await cached.get(credentialView, clientId))?.status).toBe('active');

    cached.observe(revoked);

    expect(await cached.get(credentialView, clientId)).toMatchObject({ status: 'revoked', revision: 2 });
  });

  test('when the store has not projected the revocation yet, then a fresh read is still revoked', async () => {
    const { cached, projected, advance } = setUp();
    await projected(created);
    cached.observe(revoked);
    advance(60_000); // past the ttl: the next read goes to the (lagging) store

    expect((await cached.get(credentialView, clientId))?.status).toBe('revoked');
  });

  test('when the feed saw the revocation before the store had the credential at all, then it still applies once the store has it', async () => {
    const { cached, projected, advance } = setUp();
    cached.observe(revoked);
    expect(await cached.get(credentialView, clientId)).toBeUndefined();

    await projected(created);
    advance(60_000);

    expect((await cached.get(credentialView, clientId))?.status).toBe('revoked');
  });

  test('when the store is newer than what the feed saw, then the store wins', async () => {
    const { cached, projected } = setUp();
    cached.observe(authorizationExpiredEvent(created.data, 2));
    await projected(created);
    await projected(authorizationRevokedEvent(created.data, 3));

    expect(await cached.get(credentialView, clientId)).toMatchObject({ status: 'revoked', revision: 3 });
  });

  test('when a credential was created after the store was read, then the feed makes it visible', async () => {
    const { cached } = setUp();
    expect(await cached.get(credentialView, clientId)).toBeUndefined();

    cached.observe(created);

    expect(await cached.get(credentialView, clientId)).toMatchObject({ clientId, status: 'active', revision: 1 });
  });

  test('when the overlay is older than its retention, then it is swept and the store decides', async () => {
    const { cached, projected, advance } = setUp();
    cached.observe(revoked);
    await projected(created);
    advance(600_001);

    cached.sweep();

    expect((await cached.get(credentialView, clientId))?.status).toBe('active');
  });

  test('when the feed sees a newer score, then it is the latest even before the store has it; a late older one is not', async () => {
    const { cached, projected } = setUp();
    await projected(scoreCalculatedEvent({ scoreDate: '2026-11-19', calculatedAt: '2026-11-19T10:00:00.000Z', score: 50 }));
    expect((await cached.get(currentScoreView, 'acme'))?.score).toBe(50);

    cached.observe(scoreCalculatedEvent({ scoreDate: '2026-11-20', calculatedAt: '2026-11-20T10:00:00.000Z', score: 60 }));
    expect((await cached.get(currentScoreView, 'acme'))?.score).toBe(60);

    cached.observe(scoreCalculatedEvent({ scoreDate: '2026-11-18', calculatedAt: '2026-11-20T11:00:00.000Z', score: 10 }));
    expect((await cached.get(currentScoreView, 'acme'))?.score).toBe(60);
  });

  test('when the cache is full, then the oldest entry makes room', async () => {
    const { cached, projected } = setUp(2);
    const others = [authorizationCreatedEvent().event, authorizationCreatedEvent().event];
    await cached.get(credentialView, clientId);
    for (const other of others) await cached.get(credentialView, other.data.clientId);

    await projected(created);

    // The first entry was evicted, so the new store content is read.
    expect((await cached.get(credentialView, clientId))?.clientId).toBe(clientId);
  });
});
