import { describeConsoleStateStoreContract, describeWithInfra, uniqueName } from '@rsd/testkit';
import { CONSOLE_STATE_COLLECTION, openMongoConsoleStateStore } from './mongo-console-state-store';
import { mongoForSuite } from './testing/mongo-for-suite';

describeWithInfra('mongo', 'MongoDB console state store', (target) => {
  const connected = mongoForSuite(target);

  const aDatabase = () => connected().db(uniqueName('rsd_console').replace(/-/g, '_'));

  describeConsoleStateStoreContract('MongoDB', async () => {
    const db = aDatabase();
    const store = await openMongoConsoleStateStore(db);
    return {
      store,
      cleanup: async () => {
        await store.close();
        await db.dropDatabase();
      },
    };
  });

  test('two replicas share one store: a sign-in begun on one is finished on the other, once; only digests are stored', async () => {
    const db = aDatabase();
    try {
      const [one, two] = [await openMongoConsoleStateStore(db), await openMongoConsoleStateStore(db)];
      const record = { value: { state: 's', nonce: 'n', codeVerifier: 'v' }, createdAt: 1_000, lastSeenAt: 1_000, expiresAt: 601_000 };
      await one.put('attempt', 'digest-of-the-cookie', record);
      expect(await two.take('attempt', 'digest-of-the-cookie', 2_000)).toEqual(record);
      expect(await one.take('attempt', 'digest-of-the-cookie', 2_000)).toBeUndefined();
      await one.put('session', 'digest-of-a-session', record);
      const ids = (await db.collection(CONSOLE_STATE_COLLECTION).find().toArray()).map((document) => String(document._id));
      expect(ids).toEqual(['session:digest-of-a-session']);
    } finally {
      await db.dropDatabase();
    }
  });
});
