import type { Db } from 'mongodb';
import type { WebhookStore } from '@rsd/ports';
import { aDeliveryAttempt, aPendingDelivery, aStoredWebhook, aUniqueClientId, describeWebhookStoreContract } from '@rsd/testkit';
import { openMongoWebhookStore, WEBHOOK_DELIVERIES_COLLECTION, WEBHOOKS_COLLECTION } from './mongo-webhook-store';
import { describeWithMongo, storesOnTwoClients } from './testing/mongo-for-suite';

const NOW = new Date('2026-11-21T08:00:00.000Z');
const DAY = 86_400_000;

describeWithMongo('MongoDB webhook store', 'rsd_notifier', (mongo) => {
  describeWebhookStoreContract('MongoDB', (clock) => mongo.storeOnAFreshDatabase((db) => openMongoWebhookStore(db, { clock })));

  describe('documents and replicas', () => {
    let db: Db;
    let now: Date;
    let expiry: string | undefined;
    let store: WebhookStore;
    let replica: WebhookStore;

    beforeEach(async () => {
      db = mongo.freshDatabase();
      now = NOW;
      const clock = { now: () => now };
      store = await openMongoWebhookStore(db, { clock, onExpiry: (how) => (expiry = how) });
      replica = await openMongoWebhookStore(db, { clock });
    });

    afterEach(async () => {
      await store.close();
      await replica.close();
    });

    const rawDelivery = (key: string) => db.collection<{ _id: string }>(WEBHOOK_DELIVERIES_COLLECTION).findOne({ _id: key });

    it('when two replicas add subscriptions for one Client ID at once, then exactly the limit is stored', async () => {
      const clientId = aUniqueClientId();
      const contenders = Array.from({ length: 12 }, () => aStoredWebhook({ clientId }));

      const outcomes = await Promise.all(contenders.map((webhook, n) => (n % 2 === 0 ? store : replica).addWebhook(webhook, 5)));

      expect(outcomes.filter((outcome) => outcome === 'added')).toHaveLength(5);
      expect(await store.listWebhooks(clientId)).toHaveLength(5);
      const slots = await db.collection(WEBHOOKS_COLLECTION).distinct('slot', { clientId });
      expect(slots.sort()).toEqual([0, 1, 2, 3, 4]);
    });

    it('when a subscription is disabled while a replica queues for it, then nothing stays pending', async () => {
      for (let round = 0; round < 5; round += 1) {
        const webhook = aStoredWebhook();
        await store.addWebhook(webhook, 10);

        await Promise.all([
          replica.enqueue([aPendingDelivery(webhook), aPendingDelivery(webhook)]),
          store.disableWebhook(webhook.id, NOW.toISOString()),
        ]);
      }

      expect(await store.queueStats()).toEqual({ depth: 0, oldestDueAt: null });
    });

    it('when a subscription is deleted while a replica logs an attempt for it, then no attempt stays', async () => {
      const webhooks = Array.from({ length: 5 }, () => aStoredWebhook());
      for (const webhook of webhooks) await store.addWebhook(webhook, 10);
      const owed = webhooks.map((webhook) => aPendingDelivery(webhook));
      await store.enqueue(owed);

      await Promise.all(
        webhooks.flatMap((webhook, n) => {
          const delivery = owed[n] ?? aPendingDelivery(webhook);
          return [
            replica.recordAttempt(delivery, aDeliveryAttempt(delivery), { next: 'retry', dueAt: NOW.toISOString() }, 10),
            store.deleteWebhook(webhook.clientId, webhook.id),
          ];
        }),
      );

      for (const webhook of webhooks) expect(await store.attempts(webhook.id, 10)).toEqual([]);
      expect(await store.queueStats()).toEqual({ depth: 0, oldestDueAt: null });
    });

    it('when a delivery is done, then its document keeps the key and the body (for a redelivery), out of the queue and dated for expiry', async () => {
      const webhook = aStoredWebhook();
      const delivery = aPendingDelivery(webhook);
      await store.addWebhook(webhook, 10);
      await store.enqueue([delivery]);
      const pending = await rawDelivery(delivery.key);

      await store.recordAttempt(delivery, aDeliveryAttempt(delivery), { next: 'done' }, 10);

      expect(pending).toMatchObject({ state: 'pending', body: delivery.body, dueAt: delivery.dueAt, queuedAt: NOW });
      expect(pending).not.toHaveProperty('doneAt');
      const done = await rawDelivery(delivery.key);
      expect(done).toMatchObject({ state: 'done', doneAt: NOW, queuedAt: NOW, body: delivery.body });
      expect(done).not.toHaveProperty('dueAt');
    });

    it('when delivered keys are old enough, then the server expires them or the next enqueue prunes them', async () => {
      const webhook = aStoredWebhook();
      const delivery = aPendingDelivery(webhook);
      await store.addWebhook(webhook, 10);
      await store.enqueue([delivery]);
      await store.recordAttempt(delivery, aDeliveryAttempt(delivery), { next: 'done' }, 10);
      now = new Date(NOW.getTime() + 7 * DAY + 1);

      // A store opened now has not pruned yet this hour.
      const later = await openMongoWebhookStore(db, { clock: { now: () => now } });
      await later.enqueue([aPendingDelivery(webhook)]);
      await later.close();

      const indexes = await db.collection(WEBHOOK_DELIVERIES_COLLECTION).indexes();
      expect(['ttl-index', 'prune']).toContain(expiry);
      if (expiry === 'ttl-index') {
        expect(indexes).toContainEqual(expect.objectContaining({ name: 'doneAt_ttl', expireAfterSeconds: 7 * 86_400 }));
      } else {
        expect(await rawDelivery(delivery.key)).toBeNull();
        expect(indexes).toContainEqual(expect.objectContaining({ key: { doneAt: 1 } }));
      }
    });

    it('when the store opens, then its query indexes exist, the limit among them', async () => {
      const indexes = await db.collection(WEBHOOKS_COLLECTION).indexes();

      expect(indexes).toContainEqual(expect.objectContaining({ key: { clientId: 1, slot: 1 }, unique: true }));
      expect(indexes.map((index) => index.key)).toEqual(
        expect.arrayContaining([
          { clientId: 1, createdAt: 1 },
          { organizationId: 1, status: 1, createdAt: 1 },
        ]),
      );
      const deliveryIndexes = await db.collection(WEBHOOK_DELIVERIES_COLLECTION).indexes();
      expect(deliveryIndexes.map((index) => index.key)).toEqual(
        expect.arrayContaining([
          { state: 1, dueAt: 1, _id: 1, clientId: 1 },
          { webhookId: 1, state: 1 },
        ]),
      );
      // The queue's earlier index, a prefix of the one with the owner, is gone.
      expect(deliveryIndexes.map((index) => index.key)).not.toContainEqual({ state: 1, dueAt: 1, _id: 1 });
    });

    it('when a store opens on a database that has the queue index of an earlier version, then that index is dropped (decision 50)', async () => {
      const deliveries = db.collection(WEBHOOK_DELIVERIES_COLLECTION);
      await deliveries.createIndex({ state: 1, dueAt: 1, _id: 1 });

      await (await openMongoWebhookStore(db)).close();

      expect((await deliveries.indexes()).map((index) => index.name)).not.toContain('state_1_dueAt_1__id_1');
    });

    it('when a subscription id is added twice, then the error names it and the first stays', async () => {
      const webhook = aStoredWebhook();
      await store.addWebhook(webhook, 10);

      await expect(replica.addWebhook({ ...webhook, url: 'https://other.example.com/' }, 10)).rejects.toThrow(
        `webhook ${webhook.id} already exists`,
      );

      expect(await store.listWebhooks(webhook.clientId)).toEqual([webhook]);
    });

    it('when the store is closed, then writes are refused', async () => {
      await store.close();

      await expect(store.disableWebhook(aStoredWebhook().id, NOW.toISOString())).rejects.toThrow('the webhook store is closed');
    });
  });

  describe('two processes changing one subscription', () => {
    const ROUNDS = 20;
    // As two notifier replicas are.
    const twoStores = storesOnTwoClients(mongo, (db) => openMongoWebhookStore(db));

    it('when one replica changes a subscription while the other disables it, round after round, then the disable stays and the change is kept exactly when it was acknowledged', async () => {
      const stores = twoStores();
      for (let round = 1; round <= ROUNDS; round += 1) {
        const webhook = aStoredWebhook();
        await stores[0].addWebhook(webhook, 10);
        const changed = { ...webhook, url: `https://changed.example.com/round-${round}` };

        const [updated] = await Promise.all([
          stores[0].updateWebhook(changed, 'active'),
          stores[1].disableWebhook(webhook.id, NOW.toISOString()),
        ]);

        const stored = await stores[1].findWebhook(webhook.clientId, webhook.id);
        expect({ round, status: stored?.status, url: stored?.url }).toEqual({
          round,
          status: 'disabled',
          url: updated ? changed.url : webhook.url,
        });
      }
    });
  });
});
