import { describeConsoleStateStoreContract } from '@rsd/testkit';
import { CONSOLE_STATE_COLLECTION, openMongoConsoleStateStore } from './mongo-console-state-store';
import { describeWithMongo } from './testing/mongo-for-suite';

describeWithMongo('MongoDB console state store', 'rsd_console', (mongo) => {
  describeConsoleStateStoreContract('MongoDB', () => mongo.storeOnAFreshDatabase(openMongoConsoleStateStore));

  test('two replicas share one store: a sign-in begun on one is finished on the other, once; only digests are stored', async () => {
    const db = mongo.freshDatabase();
    const [one, two] = [await openMongoConsoleStateStore(db), await openMongoConsoleStateStore(db)];
    const record = { value: { state: 's', nonce: 'n', codeVerifier: 'v' }, createdAt: 1_000, lastSeenAt: 1_000, expiresAt: 601_000 };
    await one.put('attempt', 'digest-of-the-cookie', record);
    expect(await two.take('attempt', 'digest-of-the-cookie', 2_000)).toEqual(record);
    expect(await one.take('attempt', 'digest-of-the-cookie', 2_000)).toBeUndefined();
    await one.put('session', 'digest-of-a-session', record);
    const ids = (await db.collection(CONSOLE_STATE_COLLECTION).find().toArray()).map((document) => String(document._id));
    expect(ids).toEqual(['session:digest-of-a-session']);
  });
});
