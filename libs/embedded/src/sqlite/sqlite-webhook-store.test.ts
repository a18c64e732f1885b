import { DatabaseSync } from 'node:sqlite';
import type { PendingDelivery, StoredWebhook } from '@rsd/ports';
import { aDeliveryAttempt, aPendingDelivery, aStoredAuthorization, aStoredWebhook, describeWebhookStoreContract } from '@rsd/testkit';
import { aTempDatabasePerTest, onATempDatabase, planFindings } from '../testing/temp-database';
import { openSqliteAuthorizationStore } from './sqlite-authorization-store';
import { CHANGES, openSqliteWebhookStore, QUERIES } from './sqlite-webhook-store';

const NOW = new Date('2026-11-21T08:00:00.000Z');
const DAY = 86_400_000;

describeWebhookStoreContract('SQLite', (clock) => onATempDatabase('webhooks', (file) => openSqliteWebhookStore({ file, clock })));

describe('SQLite webhook store', () => {
  const temp = aTempDatabasePerTest('webhooks');

  function rows(sql: string): Record<string, unknown>[] {
    const db = new DatabaseSync(temp.file);
    try {
      return db.prepare(sql).all();
    } finally {
      db.close();
    }
  }

  it('when the store is closed and opened again, then subscriptions, the queue, the keys and the attempts are still there', async () => {
    const first = openSqliteWebhookStore({ file: temp.file, clock: { now: () => NOW } });
    const webhook = aStoredWebhook();
    const [waiting, delivered] = [aPendingDelivery(webhook), aPendingDelivery(webhook)];
    await first.addWebhook(webhook, 10);
    await first.enqueue([waiting, delivered]);
    await first.recordAttempt(delivered, aDeliveryAttempt(delivered), { next: 'done' }, 10);
    await first.close();

    const reopened = openSqliteWebhookStore({ file: temp.file, clock: { now: () => NOW } });
    await reopened.enqueue([delivered]);

    expect(await reopened.findWebhook(webhook.clientId, webhook.id)).toEqual(webhook);
    expect(await reopened.due(NOW, 10)).toEqual([waiting]);
    expect(await reopened.attempts(webhook.id, 10)).toEqual([aDeliveryAttempt(delivered)]);
    await reopened.close();
  });

  /**
   * A database whose queue was made before `columns` existed: the store opens it, keeps what it queued,
   * adds the columns, and queues a delivery that has them.
   */
  async function queueKeptAcrossAnUpgrade(columns: string[], newer: (webhook: StoredWebhook) => Partial<PendingDelivery>): Promise<void> {
    const webhook = aStoredWebhook();
    const older = aPendingDelivery(webhook);
    const first = openSqliteWebhookStore({ file: temp.file, clock: { now: () => NOW } });
    await first.addWebhook(webhook, 10);
    await first.enqueue([older]);
    await first.close();
    const db = new DatabaseSync(temp.file);
    for (const column of columns) db.exec(`ALTER TABLE webhook_deliveries DROP COLUMN ${column}`);
    db.close();

    const reopened = openSqliteWebhookStore({ file: temp.file, clock: { now: () => NOW } });
    const withThem = aPendingDelivery(webhook, newer(webhook));
    await reopened.enqueue([withThem]);

    expect(await reopened.due(NOW, 10)).toEqual(expect.arrayContaining([older, withThem]));
    await reopened.close();
  }

  it("when the database is from before deliveries kept their event's trace context, then its queue is kept and the columns are added", () =>
    queueKeptAcrossAnUpgrade(['traceparent', 'tracestate'], () => ({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    })));

  it('when the database is from before deliveries named their grant, then its queue is kept and the column is added', () =>
    queueKeptAcrossAnUpgrade(['grant_client_id'], (webhook) => ({ grantClientId: webhook.clientId })));

  it('when the store is queried or changed, then every lookup goes through an index and none scans a table or sorts', async () => {
    const store = openSqliteWebhookStore({ file: temp.file });
    const webhook = aStoredWebhook();
    await store.addWebhook(webhook, 10);
    await store.enqueue([aPendingDelivery(webhook)]);

    const findings = planFindings(temp.file, { ...QUERIES, ...CHANGES }, ['webhooks', 'webhook_deliveries', 'webhook_attempts']);

    expect(findings).toEqual(Object.keys({ ...QUERIES, ...CHANGES }).map((name) => ({ name, scans: [], sorts: [], usesIndex: true })));
    await store.close();
  });

  it('when delivered keys were queued more than 7 days ago, then the next enqueue removes them and keeps the younger ones', async () => {
    let now = NOW;
    const store = openSqliteWebhookStore({ file: temp.file, clock: { now: () => now } });
    const webhook = aStoredWebhook();
    await store.addWebhook(webhook, 10);
    const old = [aPendingDelivery(webhook), aPendingDelivery(webhook)];
    await store.enqueue(old);
    for (const delivery of old) await store.recordAttempt(delivery, aDeliveryAttempt(delivery), { next: 'done' }, 10);
    now = new Date(NOW.getTime() + 2 * DAY);
    const young = aPendingDelivery(webhook);
    await store.enqueue([young]);
    await store.recordAttempt(young, aDeliveryAttempt(young), { next: 'done' }, 10);
    now = new Date(NOW.getTime() + 7 * DAY + 1);

    await store.enqueue([aPendingDelivery(webhook)]);
    await store.close();

    expect(rows('SELECT key FROM webhook_deliveries WHERE done = 1').map((row) => row.key)).toEqual([young.key]);
  });

  it('when a delivery is done, then its row keeps the key, the body a redelivery sends again, and what retention needs', async () => {
    const store = openSqliteWebhookStore({ file: temp.file, clock: { now: () => NOW } });
    const webhook = aStoredWebhook();
    const delivery = aPendingDelivery(webhook);
    await store.addWebhook(webhook, 10);
    await store.enqueue([delivery]);

    await store.recordAttempt(delivery, aDeliveryAttempt(delivery), { next: 'done' }, 10);
    await store.close();

    expect(rows('SELECT key, body, due_at, queued_ms, done FROM webhook_deliveries')).toEqual([
      { key: delivery.key, body: delivery.body, due_at: null, queued_ms: NOW.getTime(), done: 1 },
    ]);
  });

  it('when the authorization store shares the file, then closing the webhook store leaves it working, and both tables are there', async () => {
    const authorizations = openSqliteAuthorizationStore({ file: temp.file });
    const store = openSqliteWebhookStore({ file: temp.file });
    const webhook = aStoredWebhook();
    await store.addWebhook(webhook, 10);

    await store.close();

    await authorizations.create(aStoredAuthorization(), []);
    await authorizations.close();
    expect(rows('SELECT id FROM webhooks')).toEqual([{ id: webhook.id }]);
    expect(rows('SELECT COUNT(*) AS n FROM authorizations')).toEqual([{ n: 1 }]);
  });

  it('when a subscription id is added twice, then the second add fails and the first stays', async () => {
    const store = openSqliteWebhookStore({ file: temp.file });
    const webhook = aStoredWebhook();
    await store.addWebhook(webhook, 10);

    await expect(store.addWebhook({ ...webhook, url: 'https://other.example.com/' }, 10)).rejects.toThrow(
      `webhook ${webhook.id} already exists`,
    );

    expect(await store.listWebhooks(webhook.clientId)).toEqual([webhook]);
    await store.close();
  });

  it('when the store is closed, then further changes are refused', async () => {
    const store = openSqliteWebhookStore({ file: temp.file });
    await store.close();

    await expect(store.addWebhook(aStoredWebhook(), 10)).rejects.toThrow('the webhook store is closed');
  });
});
