import type { Db } from 'mongodb';
import type { AuthorizationStore } from '@rsd/ports';
import {
  anOutboxEntry as anEntry,
  aStoredAuthorization as aRecord,
  describeAccessReviewStoreContract,
  describeAuthorizationStoreContract,
  describeRecipientAccountStoreContract,
} from '@rsd/testkit';
import { AUTHORIZATIONS_COLLECTION, openMongoAuthorizationStore, WRITE_CLAIMS_COLLECTION } from './mongo-authorization-store';
import { describeWithMongo, storesOnTwoClients } from './testing/mongo-for-suite';

const NOW = new Date('2026-11-21T08:00:00.000Z');

describeWithMongo('MongoDB authorization store', 'rsd_authz', (mongo) => {
  describeAuthorizationStoreContract('MongoDB', () => mongo.storeOnAFreshDatabase(openMongoAuthorizationStore));
  describeRecipientAccountStoreContract('MongoDB', () => mongo.storeOnAFreshDatabase(openMongoAuthorizationStore));
  describeAccessReviewStoreContract('MongoDB', () => mongo.storeOnAFreshDatabase(openMongoAuthorizationStore));

  it('when the store is opened again on the same database (a restart), then it opens and holds what it held', async () => {
    const db = mongo.freshDatabase();
    const first = await openMongoAuthorizationStore(db);
    const record = aRecord({ organizationId: 'acme' });
    await first.create(record, []);
    await first.close();

    const reopened = await openMongoAuthorizationStore(db);

    expect(await reopened.find('acme', record.clientId)).toEqual(record);
    await reopened.close();
  });

  it('when a database holds grants written before decision 43, then the store indexes their keys once, at its next start', async () => {
    const db = mongo.freshDatabase();
    const record = aRecord({
      keyDigest: 'e'.repeat(64),
      previousKeyDigest: 'f'.repeat(64),
      previousKeyExpiresAt: '2026-11-22T08:00:00.000Z',
    });
    // As an earlier version wrote it: the record, its outbox, and no indexed copies of its digests.
    const earlier = { _id: record.clientId, ...record, outbox: [], hasOutbox: false };
    await db.collection<typeof earlier>(AUTHORIZATIONS_COLLECTION).insertOne(earlier);

    const store = await openMongoAuthorizationStore(db);

    expect(await store.findByKeyDigest('e'.repeat(64))).toEqual(record);
    expect(await store.findByKeyDigest('f'.repeat(64))).toEqual(record);
    await store.close();
  });

  it('when a record written before expiry notices has an expiry ahead, then opening the store indexes its first notice, once', async () => {
    const db = mongo.freshDatabase();
    const first = await openMongoAuthorizationStore(db);
    const legacy = aRecord({ organizationId: 'acme', expiresAt: new Date(NOW.getTime() + 3 * 86_400_000).toISOString() });
    await first.create(legacy, []);
    await first.close();
    await db
      .collection<{ _id: string }>(AUTHORIZATIONS_COLLECTION)
      .updateOne({ _id: legacy.clientId }, { $unset: { pendingNoticeAt: '' } });

    const reopened = await openMongoAuthorizationStore(db);

    expect((await reopened.findDueForExpiryNotice(NOW, 10)).map((record) => record.clientId)).toEqual([legacy.clientId]);
    await reopened.close();
  });

  describe('two processes writing one document', () => {
    const ROUNDS = 20;
    // As two credentials replicas (or one and the relay leader) are.
    const twoStores = storesOnTwoClients(mongo, (db) => openMongoAuthorizationStore(db));

    it('when both update from the same revision, round after round, then exactly one wins each round and no change or entry is lost', async () => {
      const stores = twoStores();
      const record = aRecord();
      const created = anEntry(record, 'created');
      await stores[0].create(record, [created]);
      const owed = [created];
      let current = record;

      for (let round = 1; round <= ROUNDS; round += 1) {
        const contenders = stores.map((_, n) => ({
          record: { ...current, recipientName: `round ${round} writer ${n}`, revision: current.revision + 1 },
          entry: anEntry(record, `round-${round}-writer-${n}`),
        }));

        const results = await Promise.all(
          stores.map((store, n) => store.update(contenders[n]!.record, current.revision, [contenders[n]!.entry])),
        );

        const winners = contenders.filter((_, n) => results[n]);
        expect({ round, winners: winners.length }).toEqual({ round, winners: 1 });
        current = winners[0]!.record;
        owed.push(winners[0]!.entry);
        expect(await stores[1].findByClientId(record.clientId)).toEqual(current);
      }
      expect(await stores[0].pendingOutbox(10)).toEqual([{ clientId: record.clientId, entries: owed }]);
    });

    it('when one publishes while the other updates, round after round, then no update is lost and no published entry is owed again', async () => {
      const stores = twoStores();
      const record = aRecord();
      const created = anEntry(record, 'created');
      await stores[0].create(record, [created]);
      let current = record;
      let owed = [created];

      for (let round = 1; round <= ROUNDS; round += 1) {
        const next = { ...current, recipientName: `round ${round}`, revision: current.revision + 1 };
        const entry = anEntry(record, `round-${round}`);

        const [updated] = await Promise.all([
          stores[0].update(next, current.revision, [entry]),
          stores[1].markPublished(
            record.clientId,
            owed.map(({ id }) => id),
          ),
        ]);

        expect({ round, updated }).toEqual({ round, updated: true });
        current = next;
        owed = [entry];
        expect(await stores[1].findByClientId(record.clientId)).toEqual(current);
        expect(await stores[1].pendingOutbox(10)).toEqual([{ clientId: record.clientId, entries: owed }]);
      }
    });

    it('when another writer holds the next write, then an update answers false and publishing leaves the entries owed, changing nothing', async () => {
      const db = mongo.freshDatabase();
      const store = await openMongoAuthorizationStore(db);
      const record = aRecord();
      const created = anEntry(record, 'created');
      await store.create(record, [created]);
      // A live writer's claim on the document's first write, as if it were between its claim and its write.
      await db.collection<{ _id: string; at: Date }>(WRITE_CLAIMS_COLLECTION).insertOne({ _id: `${record.clientId}#1`, at: new Date() });

      const updated = await store.update({ ...record, recipientName: 'not written', revision: 2 }, 1, []);
      await store.markPublished(record.clientId, [created.id]);

      expect(updated).toBe(false);
      expect(await store.findByClientId(record.clientId)).toEqual(record);
      expect(await store.pendingOutbox(10)).toEqual([{ clientId: record.clientId, entries: [created] }]);
      await store.close();
    });

    it('when a writer died holding a claim, then the next write takes its claim over once it is old enough', async () => {
      const db = mongo.freshDatabase();
      const store = await openMongoAuthorizationStore(db);
      const record = aRecord();
      await store.create(record, []);
      // A writer that claimed the first write a minute ago and never wrote.
      await db
        .collection<{ _id: string; at: Date }>(WRITE_CLAIMS_COLLECTION)
        .insertOne({ _id: `${record.clientId}#1`, at: new Date(Date.now() - 60_000) });

      const updated = await store.update({ ...record, recipientName: 'after the takeover', revision: 2 }, 1, []);

      expect(updated).toBe(true);
      expect(await db.collection(WRITE_CLAIMS_COLLECTION).countDocuments()).toBe(0);
      await store.close();
    });
  });

  describe('documents', () => {
    let db: Db;
    let store: AuthorizationStore;

    beforeEach(async () => {
      db = mongo.freshDatabase();
      store = await openMongoAuthorizationStore(db);
    });

    afterEach(async () => {
      await store.close();
    });

    const rawDocument = (clientId: string) => db.collection<{ _id: string }>(AUTHORIZATIONS_COLLECTION).findOne({ _id: clientId });

    it('when a record changes and owes events, then the record and its entries are one document', async () => {
      const record = aRecord({ expiresAt: '2027-01-01T00:00:00.000Z' });
      const created = anEntry(record, 'created');
      const revoked = anEntry(record, 'revoked');
      const revokedRecord = { ...record, revokedAt: NOW.toISOString(), revision: 2 };
      await store.create(record, [created]);

      await store.update(revokedRecord, 1, [revoked]);

      expect(await rawDocument(record.clientId)).toEqual({
        _id: record.clientId,
        ...revokedRecord,
        grantKeyDigest: record.keyDigest,
        outbox: [created, revoked],
        hasOutbox: true,
        writeSeq: 1,
      });
    });

    it('when every owed entry is published, then the document owes nothing and pendingOutbox skips it', async () => {
      const record = aRecord();
      const created = anEntry(record, 'created');
      await store.create(record, [created]);

      await store.markPublished(record.clientId, [created.id]);

      expect(await rawDocument(record.clientId)).toMatchObject({ outbox: [], hasOutbox: false });
      expect(await store.pendingOutbox(10)).toEqual([]);
    });

    it('when a record that can expire is revoked, then it no longer waits for expiry', async () => {
      const record = aRecord({ expiresAt: '2026-11-21T07:00:00.000Z' });
      await store.create(record, []);
      const dueBefore = await store.findDueForExpiry(NOW, 10);

      await store.update({ ...record, revokedAt: NOW.toISOString(), revision: 2 }, 1, []);

      expect(dueBefore.map((due) => due.clientId)).toEqual([record.clientId]);
      expect(await store.findDueForExpiry(NOW, 10)).toEqual([]);
      expect(await rawDocument(record.clientId)).not.toHaveProperty('pendingExpiryAt');
    });

    it('when several updates race with the same expected revision, then exactly one wins and only its entry is owed', async () => {
      const record = aRecord();
      const created = anEntry(record, 'created');
      await store.create(record, [created]);
      const contenders = Array.from({ length: 8 }, (_, n) => ({
        record: { ...record, recipientName: `contender ${n}`, revision: 2 },
        entry: anEntry(record, `contender-${n}`),
      }));

      const results = await Promise.all(contenders.map(({ record: next, entry }) => store.update(next, 1, [entry])));

      const winners = contenders.filter((_, n) => results[n]);
      expect(winners).toHaveLength(1);
      expect(await store.find(record.organizationId, record.clientId)).toEqual(winners[0]?.record);
      expect(await store.pendingOutbox(10)).toEqual([{ clientId: record.clientId, entries: [created, winners[0]?.entry] }]);
    });

    it('when an update races with publishing, then neither the change nor its entry is lost', async () => {
      const record = aRecord();
      const created = anEntry(record, 'created');
      const revoked = anEntry(record, 'revoked');
      const revokedRecord = { ...record, revokedAt: NOW.toISOString(), revision: 2 };
      await store.create(record, [created]);

      const [updated] = await Promise.all([store.update(revokedRecord, 1, [revoked]), store.markPublished(record.clientId, [created.id])]);

      expect(updated).toBe(true);
      expect(await store.find(record.organizationId, record.clientId)).toEqual(revokedRecord);
      expect(await store.pendingOutbox(10)).toEqual([{ clientId: record.clientId, entries: [revoked] }]);
    });

    it('when a Client ID is created twice, then the error names it', async () => {
      const record = aRecord();
      await store.create(record, []);

      await expect(store.create(record, [])).rejects.toThrow(`authorization ${record.clientId} already exists`);
    });

    it('when the store is closed, then writes are refused', async () => {
      await store.close();

      await expect(store.create(aRecord(), [])).rejects.toThrow('the authorization store is closed');
    });

    it('when the store opens, then its query indexes exist', async () => {
      const indexes = await db.collection(AUTHORIZATIONS_COLLECTION).listIndexes().toArray();

      expect(indexes.map((index) => index.key)).toEqual(
        expect.arrayContaining([
          { organizationId: 1, createdAt: -1 },
          { pendingExpiryAt: 1 },
          { hasOutbox: 1, createdAt: 1 },
          { grantKeyDigest: 1 },
          { grantPreviousKeyDigest: 1 },
          { grantLeakedKeyDigest: 1 },
          { accountLeakedKeyDigest: 1 },
        ]),
      );
    });
  });
});
