import { MongoClient, type Db } from 'mongodb';
import type { CredentialView, ReadViews } from '@rsd/ports';
import {
  aCalculatedScore as aScore,
  aCredentialView as aBaseCredentialView,
  describeReadViewsContract,
  describeWithInfra,
  startInfra,
  uniqueName,
  type StartedServer,
} from '@rsd/testkit';
import { pingMongo } from './mongo-health';
import { openMongoReadViews, VIEW_COLLECTIONS } from './mongo-read-views';
import { snapshotViews } from './views-snapshot';

const aCredentialView = (overrides: Partial<CredentialView> = {}) => aBaseCredentialView({ organizationId: 'acme', ...overrides });

/** What the projections would apply for a short event history, including duplicates and stragglers. */
function anEventHistory(): ((views: ReadViews) => Promise<void>)[] {
  const first = aCredentialView({ scopes: ['qr_score', 'score_trend'], expiresAt: '2027-01-01T00:00:00.000Z' });
  const second = aCredentialView({ organizationId: 'globex' });
  return [
    (views) => views.credentials.put(first),
    (views) => views.credentials.put(second),
    (views) => views.credentials.setStatus(first.clientId, 'revoked', 2),
    (views) => views.credentials.put(first),
    (views) => views.credentials.setStatus(second.clientId, 'expired', 2),
    (views) => views.credentials.setStatus(second.clientId, 'expired', 2),
    (views) => views.scores.record(aScore('acme', '2026-11-19')),
    (views) => views.scores.record(aScore('acme', '2026-11-20', { score: 80, grade: 'Sustain' })),
    (views) => views.scores.record(aScore('acme', '2026-11-20', { score: 81, grade: 'Sustain', calculatedAt: '2026-11-20T09:00:00.000Z' })),
    (views) => views.scores.record(aScore('acme', '2026-11-18', { score: 40, grade: 'Improve', calculatedAt: '2026-11-21T00:00:00.000Z' })),
    (views) => views.scores.record(aScore('acme', '2026-11-20', { score: 10, grade: 'Improve', calculatedAt: '2026-11-20T01:00:00.000Z' })),
    (views) => views.scores.record(aScore('globex', '2026-11-20')),
  ];
}

async function applyAll(views: ReadViews, history: ((views: ReadViews) => Promise<void>)[]): Promise<void> {
  for (const apply of history) await apply(views);
}

function percentile(sortedMs: number[], fraction: number): number {
  return sortedMs[Math.min(sortedMs.length - 1, Math.ceil(fraction * sortedMs.length) - 1)] ?? Number.NaN;
}

describeWithInfra('mongo', 'MongoDB read views', (target) => {
  let server: StartedServer | undefined;
  let client: MongoClient | undefined;
  const databases: Db[] = [];

  beforeAll(async () => {
    server = await startInfra('mongo', target());
    client = await MongoClient.connect(server.url, { serverSelectionTimeoutMS: 5_000 });
  }, 120_000);

  afterEach(async () => {
    await Promise.all(databases.splice(0).map((db) => db.dropDatabase()));
  });

  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  /** A database of its own for one test, dropped after it. */
  function freshDatabase(): Db {
    if (!client) throw new Error('not connected');
    const db = client.db(uniqueName('rsd_views').replace(/-/g, '_'));
    databases.push(db);
    return db;
  }

  describeReadViewsContract('MongoDB', async () => {
    const views = await openMongoReadViews(freshDatabase());
    return { views, cleanup: () => views.close() };
  });

  describe('replays', () => {
    it('when the same events are applied twice, then the views are identical (idempotent when run twice)', async () => {
      const db = freshDatabase();
      const views = await openMongoReadViews(db);
      const history = anEventHistory();
      await applyAll(views, history);
      const once = await snapshotViews(db);

      await applyAll(views, history);

      expect(await snapshotViews(db)).toEqual(once);
      expect(once.credentials.map((view) => view.status).sort()).toEqual(['expired', 'revoked']);
      expect(once.latestScores.map((latest) => [latest._id, latest.scoreDate, latest.score])).toEqual([
        ['acme', '2026-11-20', 81],
        ['globex', '2026-11-20', 72],
      ]);
      expect(once.history.map((entry) => [entry._id, entry.score])).toEqual([
        ['acme|2026-11-18', 40],
        ['acme|2026-11-19', 72],
        ['acme|2026-11-20', 81],
        ['globex|2026-11-20', 72],
      ]);
    });

    it('when the views are rebuilt from offset zero into an empty database, then they equal the live ones', async () => {
      const liveDb = freshDatabase();
      const rebuiltDb = freshDatabase();
      const history = anEventHistory();
      await applyAll(await openMongoReadViews(liveDb), history);

      await applyAll(await openMongoReadViews(rebuiltDb), history);

      expect(await snapshotViews(rebuiltDb)).toEqual(await snapshotViews(liveDb));
    });
  });

  describe('documents', () => {
    it('when a score is recorded, then history keeps it under organization and date, with both as fields', async () => {
      const db = freshDatabase();
      const views = await openMongoReadViews(db);
      const score = aScore('acme', '2026-11-20');

      await views.scores.record(score);

      const snapshot = await snapshotViews(db);
      expect(snapshot.history).toEqual([{ _id: 'acme|2026-11-20', ...score }]);
      expect(snapshot.latestScores).toEqual([{ _id: 'acme', ...score }]);
    });

    it('when the views open, then score history is indexed by organization and newest date', async () => {
      const db = freshDatabase();

      await openMongoReadViews(db);

      const indexes = await db.collection(VIEW_COLLECTIONS.history).listIndexes().toArray();
      expect(indexes.map((index) => index.key)).toContainEqual({ organizationId: 1, scoreDate: -1 });
    });

    it('when the server answers, then the readiness ping resolves', async () => {
      await expect(pingMongo(freshDatabase())).resolves.toBeUndefined();
    });
  });

  describe('request path', () => {
    it('when a credential view is read 1,000 times by Client ID among 1,000 views, then p99 stays under 100 ms', async () => {
      const db = freshDatabase();
      const views = await openMongoReadViews(db);
      const seeded = Array.from({ length: 1_000 }, () => aCredentialView());
      // Seeded in bulk, in the shape `put` writes: a thousand guarded upserts would only slow the suite.
      await db
        .collection<CredentialView & { _id: string }>(VIEW_COLLECTIONS.credentials)
        .insertMany(seeded.map((view) => ({ _id: view.clientId, ...view })));

      // FerretDB 1.24 (SQLite) misses its own `_id` index, so there this is a table scan that grows with the collection.
      const latenciesMs: number[] = [];
      for (let call = 0; call < 1_000; call += 1) {
        const view = seeded[(call * 7919) % seeded.length];
        if (!view) throw new Error('no seeded view');
        const started = process.hrtime.bigint();
        const found = await views.credentials.get(view.clientId);
        latenciesMs.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (found?.clientId !== view.clientId) throw new Error(`read ${view.clientId} back as ${found?.clientId}`);
      }

      latenciesMs.sort((a, b) => a - b);
      const p50 = percentile(latenciesMs, 0.5);
      const p99 = percentile(latenciesMs, 0.99);
      process.stderr.write(
        `[mongo] credential_views findOne by _id, 1000 calls over 1000 views: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms\n`,
      );
      expect(p99).toBeLessThan(100);
    });
  });
});
