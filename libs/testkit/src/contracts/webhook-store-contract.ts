import type { WebhookDelivery } from '@rsd/contracts';
import { queueShardOf } from '@rsd/domain';
import type { Clock, PendingDelivery, StoredWebhook, WebhookStore } from '@rsd/ports';
import { uniqueName } from './eventually';
import { describeStoreContract } from './per-test';
import { aUniqueClientId } from './port-fixtures';

export interface WebhookStoreFixture {
  store: WebhookStore;
  cleanup(): Promise<void>;
}

const NOW = new Date('2026-11-21T08:00:00.000Z');
const SECOND = 1_000;
const DAY = 86_400_000;

const at = (from: Date, ms: number) => new Date(from.getTime() + ms).toISOString();
const letters = (base: string) => uniqueName(base).replace(/[^A-Za-z0-9]/g, '');

export function aWebhookId(): string {
  return `wh_${letters('w').padEnd(16, '0').slice(0, 64)}`;
}

export function aStoredWebhook(overrides: Partial<StoredWebhook> = {}): StoredWebhook {
  return {
    id: aWebhookId(),
    clientId: aUniqueClientId(),
    organizationId: uniqueName('org'),
    url: 'https://hooks.example.com/resilience',
    events: ['score.updated', 'grade.changed'],
    status: 'active',
    createdAt: '2026-11-20T08:00:00.000Z',
    disabledAt: null,
    // Shaped like a sealed secret (nonce, tag, ciphertext), with characters a careless encoding would change.
    sealedSecret: `v1.${letters('nonce')}.${letters('tag')}+/=.${letters('sealed')}==`,
    ...overrides,
  };
}

/** A first attempt owed to `webhook`, due at NOW, with a key of its own. */
export function aPendingDelivery(webhook: StoredWebhook, overrides: Partial<PendingDelivery> = {}): PendingDelivery {
  const eventId = uniqueName('event');
  return {
    messageId: `msg_${letters('m').padEnd(16, '0').slice(0, 64)}`,
    key: `${webhook.id}:${eventId}:score.updated`,
    webhookId: webhook.id,
    clientId: webhook.clientId,
    eventType: 'score.updated',
    body: JSON.stringify({
      type: 'score.updated',
      timestamp: NOW.toISOString(),
      data: { clientId: webhook.clientId, scoreDate: '2026-11-21', score: 72, grade: 'Strengthen', note: 'é "quoted" \u2028' },
    }),
    attempts: 0,
    firstAttemptAt: null,
    dueAt: NOW.toISOString(),
    ...overrides,
  };
}

/** The attempt the notifier would log for `delivery`, made when it was due and failed with a 503. */
export function aDeliveryAttempt(delivery: PendingDelivery, overrides: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return {
    messageId: delivery.messageId,
    eventType: delivery.eventType,
    attempt: delivery.attempts + 1,
    status: 'failed',
    responseCode: 503,
    failure: 'response_status',
    scheduledAt: delivery.dueAt,
    attemptedAt: delivery.dueAt,
    ...overrides,
  };
}

/**
 * What every webhook store must do. The factory gets the clock its store should read (the 7 days a
 * delivery key is remembered count on it); each test moves it as it needs and uses ids of its own.
 */
export function describeWebhookStoreContract(name: string, open: (clock: Clock) => Promise<WebhookStoreFixture>): void {
  let now = NOW;
  const openOnTheClock = () => open({ now: () => now });
  describeStoreContract(`WebhookStore contract: ${name}`, openOnTheClock, (store) => {
    // Tests move the clock: the next store opens with it back at NOW.
    afterEach(() => {
      now = NOW;
    });

    async function added(overrides: Partial<StoredWebhook> = {}): Promise<StoredWebhook> {
      const webhook = aStoredWebhook(overrides);
      expect(await store.addWebhook(webhook, 10)).toBe('added');
      return webhook;
    }

    const keysDue = async (when: Date = NOW) => (await store.due(when, 10_000)).map((delivery) => delivery.key);
    const ids = (webhooks: readonly StoredWebhook[]) => webhooks.map((webhook) => webhook.id);

    describe('subscriptions', () => {
      it('when a subscription is added, then find and list return it exactly as stored, sealed secret included', async () => {
        const webhook = aStoredWebhook({ events: ['authorization.ended', 'score.updated'] });

        const outcome = await store.addWebhook(webhook, 10);

        expect(outcome).toBe('added');
        expect(await store.findWebhook(webhook.clientId, webhook.id)).toEqual(webhook);
        expect(await store.listWebhooks(webhook.clientId)).toEqual([webhook]);
      });

      it('when a Client ID has several subscriptions, then list returns them oldest first and only its own', async () => {
        const clientId = aUniqueClientId();
        const newest = await added({ clientId, createdAt: '2026-11-20T10:00:00.000Z' });
        const oldest = await added({ clientId, createdAt: '2026-11-20T08:00:00.000Z' });
        const middle = await added({ clientId, createdAt: '2026-11-20T09:00:00.000Z' });
        await added();

        expect(ids(await store.listWebhooks(clientId))).toEqual([oldest.id, middle.id, newest.id]);
      });

      it('when another Client ID asks for a subscription, then it is not found and not deleted', async () => {
        const webhook = await added();
        const other = aUniqueClientId();

        expect(await store.findWebhook(other, webhook.id)).toBeUndefined();
        expect(await store.listWebhooks(other)).toEqual([]);
        expect(await store.deleteWebhook(other, webhook.id)).toBe(false);
        expect(await store.findWebhook(webhook.clientId, webhook.id)).toEqual(webhook);
      });

      it("when an organization is purged (decision 56), then its webhooks, their queued bodies and attempts are gone, and another organization's stay", async () => {
        const organizationId = uniqueName('org');
        const grants = await added({ organizationId });
        const alerts = await added({ organizationId, clientId: uniqueName('org-owner') });
        const other = await added();
        for (const webhook of [grants, alerts, other]) await store.enqueue([aPendingDelivery(webhook)]);
        const [attempted] = await store.due(NOW, 10_000).then((due) => due.filter((delivery) => delivery.webhookId === grants.id));
        await store.recordAttempt(attempted!, aDeliveryAttempt(attempted!), { next: 'retry', dueAt: NOW.toISOString() }, 10);
        const [queued] = (await store.due(NOW, 10_000)).filter((delivery) => delivery.webhookId === grants.id);

        await store.purgeOrganization(organizationId);
        await store.purgeOrganization(organizationId);

        expect(await store.findWebhook(grants.clientId, grants.id)).toBeUndefined();
        expect(await store.findWebhook(alerts.clientId, alerts.id)).toBeUndefined();
        expect(await store.activeWebhooksOfOrganization(organizationId)).toEqual([]);
        expect(await store.attempts(grants.id, 10)).toEqual([]);
        expect(await store.findMessage(grants.id, queued!.messageId)).toBeUndefined();
        expect((await store.due(NOW, 10_000)).map((delivery) => delivery.webhookId)).not.toContain(grants.id);
        expect(await store.findWebhook(other.clientId, other.id)).toEqual(other);
        expect((await store.due(NOW, 10_000)).map((delivery) => delivery.webhookId)).toContain(other.id);
      });

      it('when the subscription is unknown, then find returns undefined and delete returns false', async () => {
        const clientId = aUniqueClientId();

        expect(await store.findWebhook(clientId, aWebhookId())).toBeUndefined();
        expect(await store.deleteWebhook(clientId, aWebhookId())).toBe(false);
      });

      it('when a subscription is deleted, then it is gone and a second delete returns false', async () => {
        const webhook = await added();
        const kept = await added({ clientId: webhook.clientId });

        expect(await store.deleteWebhook(webhook.clientId, webhook.id)).toBe(true);

        expect(await store.findWebhook(webhook.clientId, webhook.id)).toBeUndefined();
        expect(ids(await store.listWebhooks(webhook.clientId))).toEqual([kept.id]);
        expect(await store.deleteWebhook(webhook.clientId, webhook.id)).toBe(false);
      });
    });

    describe('the limit per Client ID', () => {
      it('when a Client ID has one fewer than the limit, then one more is added and the next is refused and not stored', async () => {
        const clientId = aUniqueClientId();
        for (let n = 0; n < 2; n += 1) await store.addWebhook(aStoredWebhook({ clientId }), 3);
        const third = aStoredWebhook({ clientId });
        const fourth = aStoredWebhook({ clientId });

        expect(await store.addWebhook(third, 3)).toBe('added');
        expect(await store.addWebhook(fourth, 3)).toBe('limit-reached');

        expect(await store.listWebhooks(clientId)).toHaveLength(3);
        expect(await store.findWebhook(clientId, fourth.id)).toBeUndefined();
      });

      it('when a Client ID is at the limit, then another Client ID can still add', async () => {
        const clientId = aUniqueClientId();
        await store.addWebhook(aStoredWebhook({ clientId }), 1);

        expect(await store.addWebhook(aStoredWebhook({ clientId }), 1)).toBe('limit-reached');
        expect(await store.addWebhook(aStoredWebhook(), 1)).toBe('added');
      });

      it('when a Client ID at the limit deletes one, then there is room for exactly one more', async () => {
        const clientId = aUniqueClientId();
        const first = aStoredWebhook({ clientId });
        await store.addWebhook(first, 2);
        await store.addWebhook(aStoredWebhook({ clientId }), 2);

        await store.deleteWebhook(clientId, first.id);

        expect(await store.addWebhook(aStoredWebhook({ clientId }), 2)).toBe('added');
        expect(await store.addWebhook(aStoredWebhook({ clientId }), 2)).toBe('limit-reached');
      });

      it('when a subscription was disabled, then it still counts until it is deleted', async () => {
        const clientId = aUniqueClientId();
        const disabled = aStoredWebhook({ clientId });
        await store.addWebhook(disabled, 1);
        await store.disableWebhook(disabled.id, NOW.toISOString());

        expect(await store.addWebhook(aStoredWebhook({ clientId }), 1)).toBe('limit-reached');
        await store.deleteWebhook(clientId, disabled.id);
        expect(await store.addWebhook(aStoredWebhook({ clientId }), 1)).toBe('added');
      });

      it('when many subscriptions are added at once, then exactly the limit is stored', async () => {
        const clientId = aUniqueClientId();
        const contenders = Array.from({ length: 8 }, () => aStoredWebhook({ clientId }));

        const outcomes = await Promise.all(contenders.map((webhook) => store.addWebhook(webhook, 3)));

        expect(outcomes.filter((outcome) => outcome === 'added')).toHaveLength(3);
        const addedIds = contenders.filter((_, n) => outcomes[n] === 'added').map((webhook) => webhook.id);
        expect(ids(await store.listWebhooks(clientId)).sort()).toEqual(addedIds.sort());
      });
    });

    describe('active subscriptions', () => {
      it('when an organization has subscriptions under several Client IDs, then all its active ones are returned and no others', async () => {
        const organizationId = uniqueName('org');
        const one = await added({ organizationId });
        const two = await added({ organizationId, createdAt: '2026-11-19T08:00:00.000Z' });
        const twoAgain = await added({ organizationId, clientId: two.clientId, createdAt: '2026-11-21T08:00:00.000Z' });
        const disabled = await added({ organizationId, clientId: one.clientId });
        await store.disableWebhook(disabled.id, NOW.toISOString());
        await added();

        const active = await store.activeWebhooksOfOrganization(organizationId);

        expect(ids(active).sort()).toEqual([one.id, two.id, twoAgain.id].sort());
        expect(active.find((webhook) => webhook.id === one.id)).toEqual(one);
      });

      it('when a Client ID has a disabled subscription, then only its active ones are returned', async () => {
        const active = await added();
        const disabled = await added({ clientId: active.clientId, organizationId: active.organizationId });
        await added({ organizationId: active.organizationId });

        await store.disableWebhook(disabled.id, NOW.toISOString());

        expect(await store.activeWebhooksOfClient(active.clientId)).toEqual([active]);
      });

      it('when nothing is subscribed, then both lists are empty', async () => {
        expect(await store.activeWebhooksOfOrganization(uniqueName('org'))).toEqual([]);
        expect(await store.activeWebhooksOfClient(aUniqueClientId())).toEqual([]);
      });
    });

    describe('disabling', () => {
      it('when a subscription is disabled, then it reads back disabled with the time, for its failures', async () => {
        const webhook = await added();
        const disabledAt = at(NOW, 60 * SECOND);

        await store.disableWebhook(webhook.id, disabledAt);

        expect(await store.findWebhook(webhook.clientId, webhook.id)).toEqual({
          ...webhook,
          status: 'disabled',
          disabledAt,
          disabledReason: 'delivery_failures',
        });
      });

      it('when a subscription is disabled, then its pending deliveries are dropped and no other subscription loses any', async () => {
        const webhook = await added();
        const other = await added({ clientId: webhook.clientId });
        const otherDelivery = aPendingDelivery(other);
        await store.enqueue([aPendingDelivery(webhook), aPendingDelivery(webhook, { attempts: 2 }), otherDelivery]);

        await store.disableWebhook(webhook.id, NOW.toISOString());

        expect(await keysDue()).toEqual([otherDelivery.key]);
        expect(await store.queueStats()).toEqual({ depth: 1, oldestDueAt: otherDelivery.dueAt });
      });

      it('when the subscription is unknown, then disabling it changes nothing', async () => {
        await expect(store.disableWebhook(aWebhookId(), NOW.toISOString())).resolves.toBeUndefined();
      });
    });

    describe('disabling the webhooks of a key cut off (decision 50)', () => {
      const KEY_A = 'a'.repeat(64);
      const KEY_B = 'b'.repeat(64);
      const KEY_NEW = 'c'.repeat(64);
      const cutAt = at(NOW, 60 * SECOND);
      const later = at(NOW, 120 * SECOND);

      it('when an owner’s keys are cut off, then each of its webhooks made before is disabled with the reason and the time, its deliveries dropped, and the answer counts them; another owner’s stay', async () => {
        const clientId = aUniqueClientId();
        const active = await added({ clientId, keyDigest: KEY_A, keyOwner: clientId });
        const paused = await added({ clientId, status: 'paused', keyDigest: KEY_B, keyOwner: clientId });
        const failing = await added({ clientId, status: 'disabled', disabledAt: NOW.toISOString(), disabledReason: 'delivery_failures' });
        const other = await added({ organizationId: active.organizationId, keyDigest: KEY_A });
        const kept = aPendingDelivery(other);
        await store.enqueue([aPendingDelivery(active), kept]);

        const disabled = await store.disableWebhooksOfKeys({ keyOwner: clientId, reason: 'key_leaked', at: cutAt, cutKeyDigests: [] });

        expect(disabled).toBe(3);
        const reason = { status: 'disabled', disabledAt: cutAt, disabledReason: 'key_leaked' };
        expect(await store.listWebhooks(clientId)).toEqual(
          expect.arrayContaining([
            { ...active, ...reason },
            { ...paused, ...reason },
            { ...failing, ...reason },
          ]),
        );
        expect(await store.activeWebhooksOfClient(clientId)).toEqual([]);
        expect(await store.activeWebhooksOfOrganization(active.organizationId)).toEqual([other]);
        expect(await keysDue()).toEqual([kept.key]);
      });

      it('when a rotation spares the new key, then its webhooks stay and every other is disabled, one without a recorded key too', async () => {
        const clientId = aUniqueClientId();
        const byNewKey = await added({ clientId, keyDigest: KEY_NEW, keyOwner: clientId });
        const byOldKey = await added({ clientId, keyDigest: KEY_A, keyOwner: clientId });
        const fromBefore = await added({ clientId });

        const disabled = await store.disableWebhooksOfKeys({
          keyOwner: clientId,
          reason: 'key_ended',
          at: cutAt,
          spareKeyDigest: KEY_NEW,
          cutKeyDigests: [KEY_A],
        });

        expect(disabled).toBe(2);
        expect(ids(await store.activeWebhooksOfClient(clientId))).toEqual([byNewKey.id]);
        for (const webhook of [byOldKey, fromBefore]) {
          expect(await store.findWebhook(clientId, webhook.id)).toMatchObject({ status: 'disabled', disabledReason: 'key_ended' });
        }
      });

      it('when one was made after the cut-off, then it is disabled only if a key cut off made it', async () => {
        const clientId = aUniqueClientId();
        const byCutKey = await added({ clientId, createdAt: later, keyDigest: KEY_A, keyOwner: clientId });
        const byLaterKey = await added({ clientId, createdAt: later, keyDigest: KEY_B, keyOwner: clientId });

        expect(await store.disableWebhooksOfKeys({ keyOwner: clientId, reason: 'key_ended', at: cutAt, cutKeyDigests: [KEY_A] })).toBe(1);

        expect(await store.findWebhook(clientId, byCutKey.id)).toMatchObject({ status: 'disabled' });
        expect(await store.findWebhook(clientId, byLaterKey.id)).toEqual(byLaterKey);
      });

      it('when an account’s keys are cut off, then a grant’s webhook its key made is disabled and counted with the account’s own', async () => {
        const accountKey = `account:${aUniqueClientId()}`;
        const portfolio = await added({ clientId: accountKey, keyDigest: KEY_A, keyOwner: accountKey });
        const grants = await added({ keyDigest: KEY_A, keyOwner: accountKey });
        const grantsOwn = await added({ clientId: grants.clientId, keyDigest: KEY_B, keyOwner: grants.clientId });

        expect(await store.disableWebhooksOfKeys({ keyOwner: accountKey, reason: 'key_leaked', at: cutAt, cutKeyDigests: [KEY_A] })).toBe(
          2,
        );

        expect(await store.findWebhook(accountKey, portfolio.id)).toMatchObject({ status: 'disabled', disabledReason: 'key_leaked' });
        expect(await store.findWebhook(grants.clientId, grants.id)).toMatchObject({ status: 'disabled', disabledReason: 'key_leaked' });
        expect(await store.findWebhook(grants.clientId, grantsOwn.id)).toEqual(grantsOwn);
      });

      it('when it is applied again, then nothing changes and the count is the same; a later cut-off leaves what a key cut-off disabled as it was', async () => {
        const clientId = aUniqueClientId();
        const webhook = await added({ clientId, keyDigest: KEY_A, keyOwner: clientId });
        const cutOff = { keyOwner: clientId, reason: 'key_ended' as const, at: cutAt, spareKeyDigest: KEY_NEW, cutKeyDigests: [KEY_A] };
        expect(await store.disableWebhooksOfKeys(cutOff)).toBe(1);

        expect(await store.disableWebhooksOfKeys(cutOff)).toBe(1);
        expect(await store.disableWebhooksOfKeys({ keyOwner: clientId, reason: 'key_leaked', at: later, cutKeyDigests: [KEY_NEW] })).toBe(
          0,
        );

        expect(await store.findWebhook(clientId, webhook.id)).toMatchObject({
          status: 'disabled',
          disabledAt: cutAt,
          disabledReason: 'key_ended',
        });
      });

      it('when one disabled for its key is set again by the current key, then it is active, answers to that key, and takes deliveries', async () => {
        const clientId = aUniqueClientId();
        const webhook = await added({ clientId, keyDigest: KEY_A, keyOwner: clientId });
        await store.disableWebhooksOfKeys({ keyOwner: clientId, reason: 'key_ended', at: cutAt, cutKeyDigests: [KEY_A] });
        const again: StoredWebhook = {
          ...webhook,
          url: 'https://again.example.com/hooks',
          status: 'active',
          disabledAt: null,
          disabledReason: null,
          activeSince: later,
          keyDigest: KEY_NEW,
        };

        expect(await store.updateWebhook(again, 'disabled')).toBe(true);

        expect(await store.findWebhook(clientId, webhook.id)).toEqual(again);
        const next = aPendingDelivery(webhook);
        await store.enqueue([next]);
        expect(await keysDue()).toEqual([next.key]);
      });

      it('when the key owner has no webhooks, then none is disabled', async () => {
        expect(
          await store.disableWebhooksOfKeys({ keyOwner: aUniqueClientId(), reason: 'key_leaked', at: cutAt, cutKeyDigests: [KEY_A] }),
        ).toBe(0);
      });
    });

    describe('the queue', () => {
      it('when a delivery is queued, then it is due exactly as it was queued', async () => {
        const delivery = aPendingDelivery(await added());

        await store.enqueue([delivery]);

        expect(await store.due(NOW, 10)).toEqual([delivery]);
      });

      it("when a delivery carries its event's trace context, then it is due with it, and one without stays without (decision 39)", async () => {
        const webhook = await added();
        const traced = aPendingDelivery(webhook, {
          traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
          tracestate: 'rojo=00f067aa0ba902b7',
        });
        const untraced = aPendingDelivery(webhook, { dueAt: new Date(NOW.getTime() - 1_000).toISOString() });

        await store.enqueue([traced, untraced]);

        expect(await store.due(NOW, 10)).toEqual([untraced, traced]);
      });

      it('when a delivery names the grant whose data it carries, then it is due with it, and one without stays without', async () => {
        const webhook = await added({ clientId: `account:rcp_${letters('account').padEnd(24, '0').slice(0, 24)}` });
        const ofGrant = aPendingDelivery(webhook, { grantClientId: aUniqueClientId() });
        const ofNone = aPendingDelivery(webhook, { dueAt: at(NOW, -SECOND) });

        await store.enqueue([ofGrant, ofNone]);

        expect(await store.due(NOW, 10)).toEqual([ofNone, ofGrant]);
      });

      it('when the same key is queued again, in the same call or a later one, then it is queued once', async () => {
        const webhook = await added();
        const delivery = aPendingDelivery(webhook);
        const replayed = { ...delivery, messageId: aPendingDelivery(webhook).messageId };

        await store.enqueue([delivery, replayed]);
        await store.enqueue([replayed]);

        expect(await store.due(NOW, 10)).toEqual([delivery]);
      });

      it('when a key was delivered, then queueing it again within 7 days adds nothing', async () => {
        const delivery = aPendingDelivery(await added());
        await store.enqueue([delivery]);
        await store.recordAttempt(
          delivery,
          aDeliveryAttempt(delivery, { status: 'succeeded', responseCode: 204, failure: null }),
          { next: 'done' },
          10,
        );
        now = new Date(NOW.getTime() + 6 * DAY);

        await store.enqueue([delivery]);

        expect(await keysDue(now)).toEqual([]);
      });

      it('when a delivered key was queued more than 7 days ago, then it is queued again', async () => {
        const delivery = aPendingDelivery(await added());
        await store.enqueue([delivery]);
        await store.recordAttempt(delivery, aDeliveryAttempt(delivery), { next: 'done' }, 10);
        now = new Date(NOW.getTime() + 7 * DAY + SECOND);

        await store.enqueue([delivery]);

        expect(await store.due(now, 10)).toEqual([delivery]);
      });

      it('when a key has waited in the queue for more than 7 days, then queueing it again still adds nothing', async () => {
        const delivery = aPendingDelivery(await added());
        await store.enqueue([delivery]);
        now = new Date(NOW.getTime() + 8 * DAY);

        await store.enqueue([{ ...delivery, dueAt: now.toISOString() }]);

        expect(await store.due(now, 10)).toEqual([delivery]);
      });

      it('when a subscription is disabled or unknown, then deliveries for it are not queued', async () => {
        const disabled = await added();
        await store.disableWebhook(disabled.id, NOW.toISOString());
        const unknown = aStoredWebhook();

        await store.enqueue([aPendingDelivery(disabled), aPendingDelivery(unknown)]);

        expect(await store.queueStats()).toEqual({ depth: 0, oldestDueAt: null });
      });

      it('when deliveries are due at different times, then due returns those at or before now, earliest first, up to the limit', async () => {
        const webhook = await added();
        const later = aPendingDelivery(webhook, { dueAt: at(NOW, -1 * SECOND) });
        const exactlyNow = aPendingDelivery(webhook, { dueAt: NOW.toISOString() });
        const earliest = aPendingDelivery(webhook, { dueAt: at(NOW, -60 * SECOND) });
        const notYet = aPendingDelivery(webhook, { dueAt: at(NOW, 1) });
        const earlier = aPendingDelivery(webhook, { dueAt: at(NOW, -30 * SECOND) });
        await store.enqueue([later, exactlyNow, earliest, notYet, earlier]);

        expect(await keysDue(NOW)).toEqual([earliest.key, earlier.key, later.key, exactlyNow.key]);
        expect((await store.due(NOW, 2)).map((delivery) => delivery.key)).toEqual([earliest.key, earlier.key]);
        expect(await store.due(NOW, 0)).toEqual([]);
        expect(await keysDue(new Date(NOW.getTime() - 61 * SECOND))).toEqual([]);
      });

      it("when one owner has many deliveries due before another owner's one, then the other's is taken in the first batch (decision 50)", async () => {
        const busy = await added();
        const other = await added();
        const backlog = Array.from({ length: 40 }, (_, n) => aPendingDelivery(busy, { dueAt: at(NOW, (n - 60) * SECOND) }));
        const waiting = aPendingDelivery(other, { dueAt: at(NOW, -SECOND) });
        await store.enqueue([...backlog, waiting]);

        const batch = (await store.due(NOW, 10)).map((delivery) => delivery.key);

        // The busy owner's first turn, the other's, the busy one's further turns, then the rest of its queue as room allows.
        expect(batch).toEqual([backlog[0]!.key, waiting.key, ...backlog.slice(1, 9).map((delivery) => delivery.key)]);
      });

      it('when several owners have deliveries due, then each gets its earliest before any gets a second, in the order they are due (decision 50)', async () => {
        const [first, second, third] = [await added(), await added(), await added()];
        const due = (webhook: StoredWebhook, seconds: number) => aPendingDelivery(webhook, { dueAt: at(NOW, -seconds * SECOND) });
        const queued = [due(first, 50), due(first, 49), due(second, 48), due(first, 47), due(third, 46), due(second, 45), due(first, 44)];
        // A delivery not due yet stays out, whatever its owner's turn.
        await store.enqueue([...queued, aPendingDelivery(third, { dueAt: at(NOW, SECOND) })]);
        const [f1, f2, s1, f3, t1, s2, f4] = queued.map((delivery) => delivery.key);

        expect(await keysDue(NOW)).toEqual([f1, s1, t1, f2, s2, f3, f4]);
        expect((await store.due(NOW, 4)).map((delivery) => delivery.key)).toEqual([f1, s1, t1, f2]);
      });

      it('when deliveries wait, then queueStats counts them and names the earliest due time', async () => {
        const webhook = await added();
        await store.enqueue([
          aPendingDelivery(webhook, { dueAt: at(NOW, 5 * SECOND) }),
          aPendingDelivery(webhook, { dueAt: at(NOW, -5 * SECOND) }),
          aPendingDelivery(await added(), { dueAt: at(NOW, 60 * SECOND) }),
        ]);

        expect(await store.queueStats()).toEqual({ depth: 3, oldestDueAt: at(NOW, -5 * SECOND) });
      });

      it('when nothing waits, then queueStats is empty', async () => {
        expect(await store.queueStats()).toEqual({ depth: 0, oldestDueAt: null });
      });
    });

    describe('attempts', () => {
      it('when an attempt is to be retried, then the delivery is due again later with the attempt counted and its first time kept', async () => {
        const delivery = aPendingDelivery(await added());
        await store.enqueue([delivery]);
        const retryAt = at(NOW, 30 * SECOND);

        await store.recordAttempt(delivery, aDeliveryAttempt(delivery), { next: 'retry', dueAt: retryAt }, 10);

        expect(await store.due(NOW, 10)).toEqual([]);
        const [again] = await store.due(new Date(retryAt), 10);
        expect(again).toEqual({ ...delivery, attempts: 1, firstAttemptAt: NOW.toISOString(), dueAt: retryAt });

        const secondRetryAt = at(NOW, 120 * SECOND);
        await store.recordAttempt(
          again ?? delivery,
          aDeliveryAttempt(again ?? delivery, { attemptedAt: retryAt }),
          { next: 'retry', dueAt: secondRetryAt },
          10,
        );
        expect(await store.due(new Date(secondRetryAt), 10)).toEqual([
          { ...delivery, attempts: 2, firstAttemptAt: NOW.toISOString(), dueAt: secondRetryAt },
        ]);
      });

      it('when an attempt is done, then the delivery leaves the queue', async () => {
        const webhook = await added();
        const delivered = aPendingDelivery(webhook);
        const waiting = aPendingDelivery(webhook);
        await store.enqueue([delivered, waiting]);

        await store.recordAttempt(
          delivered,
          aDeliveryAttempt(delivered, { status: 'succeeded', responseCode: 200, failure: null }),
          { next: 'done' },
          10,
        );

        expect(await keysDue(new Date(NOW.getTime() + DAY))).toEqual([waiting.key]);
        expect(await store.queueStats()).toEqual({ depth: 1, oldestDueAt: waiting.dueAt });
      });

      it('when attempts are recorded, then the log lists them newest first, as recorded, up to the limit asked', async () => {
        const webhook = await added();
        const delivery = aPendingDelivery(webhook);
        await store.enqueue([delivery]);
        const logged: WebhookDelivery[] = [];
        for (let n = 0; n < 3; n += 1) {
          const attempt = aDeliveryAttempt(delivery, {
            attempt: n + 1,
            attemptedAt: at(NOW, n * 10 * SECOND),
            scheduledAt: at(NOW, n * 10 * SECOND),
          });
          logged.push(attempt);
          await store.recordAttempt({ ...delivery, attempts: n }, attempt, { next: 'retry', dueAt: at(NOW, (n + 1) * 10 * SECOND) }, 10);
        }

        expect(await store.attempts(webhook.id, 10)).toEqual([...logged].reverse());
        expect(await store.attempts(webhook.id, 2)).toEqual([logged[2], logged[1]]);
        expect(await store.attempts(aWebhookId(), 10)).toEqual([]);
      });

      it('when a log would grow beyond what is kept, then only the newest attempts of that subscription stay', async () => {
        const webhook = await added();
        const other = await added({ clientId: webhook.clientId });
        const ofOther = aPendingDelivery(other);
        await store.enqueue([ofOther]);
        await store.recordAttempt(ofOther, aDeliveryAttempt(ofOther), { next: 'done' }, 2);
        const deliveries = Array.from({ length: 4 }, (_, n) => aPendingDelivery(webhook, { dueAt: at(NOW, n * SECOND) }));
        await store.enqueue(deliveries);

        for (const delivery of deliveries) {
          await store.recordAttempt(
            delivery,
            aDeliveryAttempt(delivery, { status: 'succeeded', responseCode: 200, failure: null }),
            { next: 'done' },
            2,
          );
        }

        expect((await store.attempts(webhook.id, 10)).map((attempt) => attempt.messageId)).toEqual([
          deliveries[3]?.messageId,
          deliveries[2]?.messageId,
        ]);
        expect(await store.attempts(other.id, 10)).toEqual([aDeliveryAttempt(ofOther)]);
      });

      it('when a delivery is skipped, then it leaves the queue and the log lists it with why, while an attempt that was not skipped has no such field', async () => {
        const webhook = await added();
        const skipped = aPendingDelivery(webhook);
        const failed = aPendingDelivery(webhook, { dueAt: at(NOW, -SECOND) });
        await store.enqueue([skipped, failed]);
        const skip = aDeliveryAttempt(skipped, {
          status: 'skipped',
          responseCode: null,
          failure: null,
          skipped: 'address_not_allowed',
          attemptedAt: at(NOW, SECOND),
        });

        await store.recordAttempt(failed, aDeliveryAttempt(failed), { next: 'retry', dueAt: at(NOW, 60 * SECOND) }, 10);
        await store.recordAttempt(skipped, skip, { next: 'done' }, 10);

        expect(await store.attempts(webhook.id, 10)).toEqual([skip, aDeliveryAttempt(failed)]);
        expect((await store.attempts(webhook.id, 10))[1]).not.toHaveProperty('skipped');
        expect(await keysDue(new Date(NOW.getTime() + DAY))).toEqual([failed.key]);
      });

      it('when an attempt is recorded for a subscription deleted meanwhile, then nothing is logged or queued for it', async () => {
        const webhook = await added();
        const delivery = aPendingDelivery(webhook);
        await store.enqueue([delivery]);
        await store.deleteWebhook(webhook.clientId, webhook.id);

        await store.recordAttempt(delivery, aDeliveryAttempt(delivery), { next: 'retry', dueAt: at(NOW, SECOND) }, 10);

        expect(await store.attempts(webhook.id, 10)).toEqual([]);
        expect(await store.queueStats()).toEqual({ depth: 0, oldestDueAt: null });
      });
    });

    describe('replicas sharing the queue (decision 52)', () => {
      it('when due is asked for some shards, then it gives only the deliveries of owners in those shards, all of them', async () => {
        const webhooks = await Promise.all(Array.from({ length: 6 }, () => added()));
        const deliveries = webhooks.map((webhook) => aPendingDelivery(webhook));
        await store.enqueue(deliveries);
        const shardOf = (delivery: PendingDelivery) => queueShardOf(delivery.clientId);
        const some = [...new Set(deliveries.map(shardOf))].slice(0, 2);

        const due = await store.due(NOW, 100, some);

        const keys = (list: readonly PendingDelivery[]) => list.map((delivery) => delivery.key).sort();
        expect(keys(due)).toEqual(keys(deliveries.filter((delivery) => some.includes(shardOf(delivery)))));
        expect(await store.due(NOW, 100, [])).toEqual([]);
        expect(keys(await store.due(NOW, 100))).toEqual(keys(deliveries));
      });

      it('when an attempt is recorded under an older fence than one already written, then nothing changes and it says so', async () => {
        const delivery = aPendingDelivery(await added());
        await store.enqueue([delivery]);
        const retryAt = at(NOW, 30 * SECOND);
        // The shard's new holder (fence 2) recorded a failed attempt …
        expect(await store.recordAttempt(delivery, aDeliveryAttempt(delivery), { next: 'retry', dueAt: retryAt }, 10, 2)).toBe(true);

        // … then the replica that lost it (fence 1) answers late: it neither finishes the delivery nor logs its attempt.
        expect(await store.recordAttempt(delivery, aDeliveryAttempt(delivery), { next: 'done' }, 10, 1)).toBe(false);
        expect(await store.discard(delivery, 1)).toBe(false);

        const [again] = await store.due(new Date(retryAt), 10);
        expect(again).toMatchObject({ key: delivery.key, attempts: 1 });
        expect(await store.attempts(delivery.webhookId, 10)).toHaveLength(1);
        expect(await store.recordAttempt(again ?? delivery, aDeliveryAttempt(again ?? delivery), { next: 'done' }, 10, 3)).toBe(true);
        expect(await store.due(new Date(retryAt), 10)).toEqual([]);
      });
    });

    describe('deleting a subscription', () => {
      it('when a subscription is deleted, then its queue and its attempts go with it and another subscription keeps its own', async () => {
        const webhook = await added();
        const other = await added({ clientId: webhook.clientId });
        const attempted = aPendingDelivery(webhook);
        const kept = aPendingDelivery(other);
        await store.enqueue([attempted, aPendingDelivery(webhook), kept]);
        await store.recordAttempt(attempted, aDeliveryAttempt(attempted), { next: 'retry', dueAt: at(NOW, SECOND) }, 10);
        await store.recordAttempt(kept, aDeliveryAttempt(kept), { next: 'retry', dueAt: at(NOW, SECOND) }, 10);

        expect(await store.deleteWebhook(webhook.clientId, webhook.id)).toBe(true);

        expect(await store.attempts(webhook.id, 10)).toEqual([]);
        expect(await store.attempts(other.id, 10)).toEqual([aDeliveryAttempt(kept)]);
        expect(await keysDue(new Date(NOW.getTime() + DAY))).toEqual([kept.key]);
      });
    });

    describe('changing a subscription (decision 45)', () => {
      it('when a subscription is changed, then find, list and the active lists return it as changed, every field kept', async () => {
        const webhook = await added();
        const changed: StoredWebhook = {
          ...webhook,
          url: 'https://other.example.com/hooks',
          events: ['grade.changed'],
          conditions: { scoreBelow: 60, gradeChanged: true },
          activeSince: at(NOW, SECOND),
          sealedSecret: `${webhook.sealedSecret}new`,
          previousSealedSecret: webhook.sealedSecret,
          previousSecretExpiresAt: at(NOW, DAY),
        };

        expect(await store.updateWebhook(changed, 'active')).toBe(true);

        expect(await store.findWebhook(webhook.clientId, webhook.id)).toEqual(changed);
        expect(await store.listWebhooks(webhook.clientId)).toEqual([changed]);
        expect(await store.activeWebhooksOfOrganization(webhook.organizationId)).toEqual([changed]);
        expect(await store.activeWebhooksOfClient(webhook.clientId)).toEqual([changed]);
      });

      it('when a subscription is paused, then it leaves the active lists and its pending deliveries leave the queue; re-enabled, it is back and takes new ones', async () => {
        const webhook = await added();
        await store.enqueue([aPendingDelivery(webhook)]);

        expect(await store.updateWebhook({ ...webhook, status: 'paused' }, 'active')).toBe(true);

        expect(await store.activeWebhooksOfOrganization(webhook.organizationId)).toEqual([]);
        expect(await store.activeWebhooksOfClient(webhook.clientId)).toEqual([]);
        expect(await keysDue()).toEqual([]);
        await store.enqueue([aPendingDelivery(webhook)]);
        expect(await keysDue()).toEqual([]);

        const enabled = { ...webhook, status: 'active' as const, activeSince: at(NOW, SECOND) };
        expect(await store.updateWebhook(enabled, 'paused')).toBe(true);
        const next = aPendingDelivery(webhook);
        await store.enqueue([next]);
        expect(await store.activeWebhooksOfClient(webhook.clientId)).toEqual([enabled]);
        expect(await keysDue()).toEqual([next.key]);
      });

      it('when a subscription disabled after failures is re-enabled, then it is active again with no disabled date', async () => {
        const webhook = await added();
        await store.disableWebhook(webhook.id, at(NOW, SECOND));
        const disabled = await store.findWebhook(webhook.clientId, webhook.id);
        expect(disabled).toMatchObject({ status: 'disabled', disabledAt: at(NOW, SECOND) });

        expect(await store.updateWebhook({ ...webhook, status: 'active', disabledAt: null }, 'disabled')).toBe(true);

        expect(await store.activeWebhooksOfOrganization(webhook.organizationId)).toEqual([
          { ...webhook, status: 'active', disabledAt: null },
        ]);
      });

      it('when the subscription is unknown or another Client ID names it, then nothing changes and the answer is false', async () => {
        const webhook = await added();

        expect(await store.updateWebhook(aStoredWebhook(), 'active')).toBe(false);
        expect(await store.updateWebhook({ ...webhook, clientId: aUniqueClientId(), url: 'https://else.example.com/' }, 'active')).toBe(
          false,
        );

        expect(await store.findWebhook(webhook.clientId, webhook.id)).toEqual(webhook);
      });
    });

    describe('a change made from a stale copy (decision 45)', () => {
      it('when the worker disabled a subscription after it was read, then a change expecting it active is not written, and it stays disabled', async () => {
        const webhook = await added();
        await store.disableWebhook(webhook.id, at(NOW, SECOND));

        expect(await store.updateWebhook({ ...webhook, url: 'https://other.example.com/' }, 'active')).toBe(false);

        expect(await store.findWebhook(webhook.clientId, webhook.id)).toMatchObject({ status: 'disabled', url: webhook.url });
        expect(await store.activeWebhooksOfClient(webhook.clientId)).toEqual([]);
      });
    });

    describe('finding a message again (decision 45)', () => {
      it('when a delivery was queued, then its message is found by webhook-id while pending and once delivered, with its body as sent', async () => {
        const webhook = await added();
        const delivery = aPendingDelivery(webhook);
        await store.enqueue([delivery]);
        const expected = {
          key: delivery.key,
          messageId: delivery.messageId,
          webhookId: webhook.id,
          clientId: webhook.clientId,
          eventType: delivery.eventType,
          body: delivery.body,
        };

        expect(await store.findMessage(webhook.id, delivery.messageId)).toEqual(expected);
        await store.recordAttempt(
          delivery,
          aDeliveryAttempt(delivery, { status: 'succeeded', responseCode: 204, failure: null }),
          { next: 'done' },
          10,
        );
        expect(await store.findMessage(webhook.id, delivery.messageId)).toEqual(expected);
      });

      it('when the message named the grant whose data it carries, then it is found with it, and a redelivery queued from it is due with it', async () => {
        const webhook = await added();
        const grantClientId = aUniqueClientId();
        const delivery = aPendingDelivery(webhook, { grantClientId });
        await store.enqueue([delivery]);
        await store.recordAttempt(delivery, aDeliveryAttempt(delivery), { next: 'done' }, 10);

        const message = await store.findMessage(webhook.id, delivery.messageId);
        expect(message).toMatchObject({ messageId: delivery.messageId, grantClientId });
        await store.enqueue([{ ...delivery, ...message, key: `${delivery.key}:again` }]);

        expect(await store.due(NOW, 10)).toEqual([{ ...delivery, key: `${delivery.key}:again` }]);
      });

      it("when the message is another subscription's or unknown, then it is not found", async () => {
        const webhook = await added();
        const other = await added();
        const delivery = aPendingDelivery(webhook);
        await store.enqueue([delivery]);

        expect(await store.findMessage(other.id, delivery.messageId)).toBeUndefined();
        expect(await store.findMessage(webhook.id, aPendingDelivery(webhook).messageId)).toBeUndefined();
      });

      it('when a message is queued again under a new key with its webhook-id (a redelivery), then it is due once more with the same id and body', async () => {
        const webhook = await added();
        const delivery = aPendingDelivery(webhook);
        await store.enqueue([delivery]);
        await store.recordAttempt(delivery, aDeliveryAttempt(delivery), { next: 'done' }, 10);

        await store.enqueue([{ ...delivery, key: `${delivery.key}:again` }]);

        const due = await store.due(NOW, 10);
        expect(due.filter((queued) => queued.webhookId === webhook.id)).toEqual([
          expect.objectContaining({ key: `${delivery.key}:again`, messageId: delivery.messageId, body: delivery.body, attempts: 0 }),
        ]);
      });
    });
  });
}
