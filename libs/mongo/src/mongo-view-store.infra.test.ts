import type { DomainEvent } from '@rsd/contracts';
import { READ_VIEWS, currentScoreView, scoreHistoryView } from '@rsd/domain';
import { type ViewStore } from '@rsd/ports';
import { projectEvent } from '@rsd/consumers';
import { aCalculatedScore as aScore, describeViewStoreContract, scoreCalculated } from '@rsd/testkit';
import { pingMongo } from './mongo-health';
import { openMongoViewStore } from './mongo-view-store';
import { snapshotViews } from './views-snapshot';
import { describeWithMongo } from './testing/mongo-for-suite';

/** A short score history, with a recalculation, a late older date, a stale calculation and a duplicate. */
function anEventHistory(): DomainEvent[] {
  const events = [
    scoreCalculated(aScore('acme', '2026-11-19')),
    scoreCalculated(aScore('acme', '2026-11-20', { score: 80, grade: 'Sustain' })),
    scoreCalculated(aScore('acme', '2026-11-20', { score: 81, grade: 'Sustain', calculatedAt: '2026-11-20T09:00:00.000Z' })),
    scoreCalculated(aScore('acme', '2026-11-18', { score: 40, grade: 'Improve', calculatedAt: '2026-11-21T00:00:00.000Z' })),
    scoreCalculated(aScore('acme', '2026-11-20', { score: 10, grade: 'Improve', calculatedAt: '2026-11-20T01:00:00.000Z' })),
    scoreCalculated(aScore('globex', '2026-11-20')),
  ];
  return [...events, events[1] as DomainEvent];
}

async function applyAll(store: ViewStore, events: DomainEvent[]): Promise<void> {
  for (const event of events) await projectEvent(store, READ_VIEWS, event);
}

describeWithMongo('MongoDB read views', 'rsd_views', (mongo) => {
  describeViewStoreContract('MongoDB', () => mongo.storeOnAFreshDatabase((db) => openMongoViewStore(db, READ_VIEWS)));

  describe('replays', () => {
    it('when the same events are applied twice, then the views are identical (idempotent when run twice)', async () => {
      const db = mongo.freshDatabase();
      const store = await openMongoViewStore(db, READ_VIEWS);
      const history = anEventHistory();
      await applyAll(store, history);
      const once = await snapshotViews(db, READ_VIEWS);

      await applyAll(store, history);

      expect(await snapshotViews(db, READ_VIEWS)).toEqual(once);
      expect(await store.get(currentScoreView, 'acme')).toMatchObject({ scoreDate: '2026-11-20', score: 81 });
      expect(await store.get(currentScoreView, 'globex')).toMatchObject({ scoreDate: '2026-11-20', score: 72 });
      expect((await store.list(scoreHistoryView, 'acme', { limit: 10 })).map((entry) => [entry.scoreDate, entry.score])).toEqual([
        ['2026-11-20', 81],
        ['2026-11-19', 72],
        ['2026-11-18', 40],
      ]);
    });

    it('when the views are rebuilt from offset zero into an empty database, then they equal the live ones', async () => {
      const liveDb = mongo.freshDatabase();
      const rebuiltDb = mongo.freshDatabase();
      const history = anEventHistory();
      await applyAll(await openMongoViewStore(liveDb, READ_VIEWS), history);

      await applyAll(await openMongoViewStore(rebuiltDb, READ_VIEWS), history);

      expect(await snapshotViews(rebuiltDb, READ_VIEWS)).toEqual(await snapshotViews(liveDb, READ_VIEWS));
    });
  });

  describe('documents', () => {
    it('when a score is recorded, then history keeps it under organization and date, with its version and list keys, and is the current score', async () => {
      const db = mongo.freshDatabase();
      const store = await openMongoViewStore(db, READ_VIEWS);
      const event = scoreCalculated(aScore('acme', '2026-11-20'));
      // The score and the id of the event that carried it (a certificate names it, decision 55).
      const score = { ...event.data, eventId: event.id };

      await projectEvent(store, READ_VIEWS, event);

      const snapshot = await snapshotViews(db, READ_VIEWS);
      expect(snapshot[scoreHistoryView.name]).toEqual([
        { _id: 'acme|2026-11-20', version: score.calculatedAt, state: score, partition: 'acme', sortKey: '2026-11-20' },
      ]);
      // The current score is the history's head, stored nowhere.
      expect(snapshot[currentScoreView.name]).toEqual([]);
      expect(await store.get(currentScoreView, 'acme')).toEqual(score);
    });

    it('when the store opens, then each listed view is indexed by partition and newest sort key', async () => {
      const db = mongo.freshDatabase();

      await openMongoViewStore(db, READ_VIEWS);

      const indexes = await db.collection(scoreHistoryView.name).listIndexes().toArray();
      expect(indexes.map((index) => index.key)).toContainEqual({ partition: 1, sortKey: -1 });
    });

    it('when the server answers, then the readiness ping resolves', async () => {
      await expect(pingMongo(mongo.freshDatabase())).resolves.toBeUndefined();
    });
  });
});
