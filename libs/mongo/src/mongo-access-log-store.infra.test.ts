import { anAccessRecord, aUniqueClientId, describeAccessLogStoreContract } from '@rsd/testkit';
import { ACCESS_LOG_COLLECTION, ACCESS_USAGE_COLLECTION, openMongoAccessLogStore } from './mongo-access-log-store';
import { describeWithMongo } from './testing/mongo-for-suite';

const NOW = new Date('2026-11-23T12:30:30.000Z');

describeWithMongo('MongoDB access log store', 'rsd_access', (mongo) => {
  describeAccessLogStoreContract('MongoDB', () => mongo.storeOnAFreshDatabase((db) => openMongoAccessLogStore(db, { retentionDays: 90 })));

  test('when the projection delivers a batch again, and two projections recount at once, then each record is listed and counted once', async () => {
    const db = mongo.freshDatabase();
    const [one, two] = [await openMongoAccessLogStore(db, { retentionDays: 90 }), await openMongoAccessLogStore(db, { retentionDays: 90 })];
    const clientId = aUniqueClientId();
    const batch = Array.from({ length: 30 }, (_, n) =>
      anAccessRecord(clientId, (30 - n) * 7_000, n % 10 === 0 ? { status: 401, code: 'INVALID_API_KEY' } : {}),
    );

    await one.add(batch);
    await Promise.all([one.add(batch.slice(10)), two.add(batch.slice(0, 20))]);

    expect(await one.page(clientId, { limit: 100 })).toHaveLength(30);
    expect((await two.usage([clientId], NOW)).get(clientId)?.usage).toEqual({ last24h: 27, last30d: 27 });
  });

  test('when a message holds many credentials whose buckets exist already, then its counts are written at once, and each minute and hour is right', async () => {
    const db = mongo.freshDatabase();
    const store = await openMongoAccessLogStore(db, { retentionDays: 90 });
    const clientIds = Array.from({ length: 150 }, () => aUniqueClientId());
    const message = (agoMs: number) =>
      clientIds.flatMap((clientId, n) => [
        anAccessRecord(clientId, agoMs),
        ...(n % 3 === 0 ? [anAccessRecord(clientId, agoMs + 1, { status: 429, code: 'RATE_LIMITED' })] : []),
      ]);
    await store.add(message(3_000));
    // The same minutes, hours and last uses again: 450 updates of existing documents in one command.
    await store.add(message(2_000));

    const usage = await store.usage(clientIds, NOW);
    for (const clientId of clientIds) expect(usage.get(clientId)?.usage).toEqual({ last24h: 2, last30d: 2 });
    const refusals = await db
      .collection(ACCESS_USAGE_COLLECTION)
      .find({ clientId: clientIds[0], grain: { $in: ['minute', 'hour'] } })
      .toArray();
    expect(refusals.map((bucket) => bucket.refusals as number)).toEqual([2, 2]);
  });

  test('when a batch was inserted but not counted (the process stopped between), then its delivery again counts every record', async () => {
    const db = mongo.freshDatabase();
    const store = await openMongoAccessLogStore(db, { retentionDays: 90 });
    const clientId = aUniqueClientId();
    const counted = Array.from({ length: 5 }, (_, n) => anAccessRecord(clientId, (40 - n) * 1_000));
    const uncounted = Array.from({ length: 12 }, (_, n) => anAccessRecord(clientId, (20 - n) * 1_000));
    await store.add(counted);
    // What an insert leaves when the process stops before the counts: the entries, and no usage.
    await db
      .collection(ACCESS_LOG_COLLECTION)
      .insertMany(uncounted.map(({ id, ...fields }) => ({ ...fields, _id: id as never, at: new Date(fields.at) })));

    await store.add(uncounted);

    expect(await store.page(clientId, { limit: 100 })).toHaveLength(17);
    expect((await store.usage([clientId], NOW)).get(clientId)?.usage).toEqual({ last24h: 17, last30d: 17 });
  });

  test('when records are stored, then the documents hold the entry and a date for expiry, and the server either expires them or leaves it to prune', async () => {
    const db = mongo.freshDatabase();
    let expiry: string | undefined;
    const store = await openMongoAccessLogStore(db, { retentionDays: 7, onExpiry: (how) => (expiry = how) });
    const record = anAccessRecord(aUniqueClientId(), 1_000);
    await store.add([record]);

    const stored = await db.collection(ACCESS_LOG_COLLECTION).findOne({ _id: record.id as never });
    const indexes = await db.collection(ACCESS_LOG_COLLECTION).indexes();

    const { id, ...fields } = record;
    expect(stored).toEqual({ ...fields, _id: id, at: new Date(record.at) });
    expect(['ttl-index', 'prune']).toContain(expiry);
    if (expiry === 'ttl-index') expect(indexes).toContainEqual(expect.objectContaining({ name: 'at_ttl', expireAfterSeconds: 7 * 86_400 }));
    expect(await db.collection(ACCESS_USAGE_COLLECTION).countDocuments()).toBe(3);
  });
});
