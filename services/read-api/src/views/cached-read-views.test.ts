import { createMemoryReadViews } from '@rsd/embedded';
import type { CredentialView, ReadViews } from '@rsd/ports';
import { aScoreSubmission } from '@rsd/testkit';
import { createCachedReadViews } from './cached-read-views';

const view = (overrides: Partial<CredentialView> = {}): CredentialView => ({
  clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
  organizationId: 'acme',
  keyDigest: 'a'.repeat(64),
  scopes: ['qr_score'],
  status: 'active',
  expiresAt: null,
  revision: 1,
  ...overrides,
});

const score = (scoreDate: string, calculatedAt: string, value: number) => ({
  ...aScoreSubmission({ scoreDate, score: value }),
  calculatedAt,
});

function setUp() {
  let time = 1_000_000;
  const store = createMemoryReadViews();
  const reads = { credentials: 0, scores: 0 };
  const counted: ReadViews = {
    ...store,
    credentials: { ...store.credentials, get: (id) => (reads.credentials++, store.credentials.get(id)) },
    scores: { ...store.scores, latest: (org) => (reads.scores++, store.scores.latest(org)) },
  };
  const cached = createCachedReadViews(counted, { ttlMs: 30_000, overlayRetentionMs: 600_000, maxEntries: 100, now: () => time });
  return { store, cached, reads, advance: (ms: number) => (time += ms) };
}

describe('cached read views', () => {
  test('when a view was read within the ttl, then it is served without another store read', async () => {
    const { store, cached, reads } = setUp();
    await store.credentials.put(view());
    await cached.credentials.get(view().clientId);
    await cached.credentials.get(view().clientId);
    expect(reads.credentials).toBe(1);
  });

  test('when the feed sees a revocation, then a cached active view is served revoked at once', async () => {
    const { store, cached } = setUp();
    await store.credentials.put(view());
    expect((await cached.credentials.get(view().clientId))?.status).toBe('active');

    await cached.credentials.setStatus(view().clientId, 'revoked', 2);

    expect(await cached.credentials.get(view().clientId)).toMatchObject({ status: 'revoked', revision: 2 });
  });

  test('when the store has not projected the revocation yet, then a fresh read is still revoked', async () => {
    const { store, cached, advance } = setUp();
    await store.credentials.put(view());
    await cached.credentials.setStatus(view().clientId, 'revoked', 2);
    advance(60_000); // past the ttl: the next read goes to the (lagging) store

    expect((await cached.credentials.get(view().clientId))?.status).toBe('revoked');
  });

  test('when the store is newer than what the feed saw, then the store wins', async () => {
    const { store, cached } = setUp();
    await cached.credentials.setStatus(view().clientId, 'expired', 2);
    await store.credentials.put(view({ status: 'revoked', revision: 3 }));

    expect(await cached.credentials.get(view().clientId)).toMatchObject({ status: 'revoked', revision: 3 });
  });

  test('when a credential was created after the store was read, then the feed makes it visible', async () => {
    const { cached } = setUp();
    expect(await cached.credentials.get(view().clientId)).toBeUndefined();
    await cached.credentials.put(view());
    expect(await cached.credentials.get(view().clientId)).toEqual(view());
  });

  test('when the overlay is older than its retention, then it is swept and the store decides', async () => {
    const { store, cached, advance } = setUp();
    await cached.credentials.setStatus(view().clientId, 'revoked', 2);
    await store.credentials.put(view());
    advance(600_001);
    cached.sweep();
    expect((await cached.credentials.get(view().clientId))?.status).toBe('active');
  });

  test('when the feed sees a newer score, then it is the latest even before the store has it', async () => {
    const { store, cached } = setUp();
    await store.scores.record(score('2026-11-19', '2026-11-19T10:00:00.000Z', 50));
    expect((await cached.scores.latest('acme'))?.score).toBe(50);

    await cached.scores.record(score('2026-11-20', '2026-11-20T10:00:00.000Z', 60));
    expect((await cached.scores.latest('acme'))?.score).toBe(60);

    await cached.scores.record(score('2026-11-18', '2026-11-20T11:00:00.000Z', 10));
    expect((await cached.scores.latest('acme'))?.score).toBe(60);
  });

  test('when the cache is full, then the oldest entry makes room', async () => {
    const store = createMemoryReadViews();
    const cached = createCachedReadViews(store, { ttlMs: 30_000, overlayRetentionMs: 600_000, maxEntries: 2 });
    for (const id of ['rs_A', 'rs_B', 'rs_C']) await cached.credentials.get(id);
    await store.credentials.put(view({ clientId: 'rs_A' }));
    // rs_A was evicted, so the new store content is read.
    expect((await cached.credentials.get('rs_A'))?.clientId).toBe('rs_A');
  });
});
