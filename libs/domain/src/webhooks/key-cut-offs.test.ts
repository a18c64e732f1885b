import { EVENT_TYPES, webhookPayloadSchema, type AlertType } from '@rsd/contracts';
import { anEvent } from '@rsd/testkit';
import type { RecipientAccountView } from '../views/account-views';
import type { CredentialView } from '../views/credential-view';
import { cutOffDisables, isDisabledForItsKey, keyCutOffOf, type KeyCutOff, type KeyedWebhook } from './key-cut-offs';
import { alertDeliveriesFor, alertTriggerOf } from './notifications';

const clientId = 'rs_AAAAAAAAAAAAAAAAAAAAAAAA';
const accountId = 'rcp_AAAAAAAAAAAAAAAAAAAAAAAA';
const organizationId = 'acme';
const digest = (c: string) => c.repeat(64);
const [oldest, previous, current, next] = [digest('0'), digest('1'), digest('2'), digest('3')];
const cutAt = new Date('2026-11-21T08:00:00.000Z');
const stamp = { time: cutAt };

const credential: CredentialView = {
  clientId,
  organizationId,
  keyDigest: current,
  previousKeyDigest: previous,
  previousKeyExpiresAt: '2026-11-22T08:00:00.000Z',
  scopes: ['qr_score'],
  status: 'active',
  expiresAt: null,
  revision: 3,
};
const account: RecipientAccountView = {
  accountId,
  name: null,
  keyDigest: current,
  previousKeyDigest: previous,
  previousKeyExpiresAt: '2026-11-22T08:00:00.000Z',
  revision: 3,
};

const rotated = (previousKeyDigest: string | null) =>
  anEvent(
    EVENT_TYPES.authorizationKeyRotated,
    {
      clientId,
      organizationId,
      keyDigest: next,
      previousKeyDigest,
      previousKeyExpiresAt: previousKeyDigest ? '2026-11-22T08:00:00.000Z' : null,
      rotatedAt: cutAt.toISOString(),
      revision: 4,
    },
    stamp,
  );

describe('keyCutOffOf: which events cut a key off (decision 50)', () => {
  test('when a grant key is rotated without an overlap, then every key but the new one ended: the keys it had are cut, the new one spared', () => {
    expect(keyCutOffOf(rotated(null), { credential })).toEqual({
      keyOwner: clientId,
      reason: 'key_ended',
      at: cutAt.toISOString(),
      spareKeyDigest: next,
      cutKeyDigests: [current, previous],
    });
  });

  test('when a key is rotated with an overlap (a routine rotation), then nothing is cut off: the webhooks go on', () => {
    expect(keyCutOffOf(rotated(current), { credential })).toBeUndefined();
    const routine = anEvent(
      EVENT_TYPES.recipientAccountKeyRotated,
      { accountId, keyDigest: next, previousKeyDigest: current, previousKeyExpiresAt: null, rotatedAt: cutAt.toISOString(), revision: 4 },
      stamp,
    );
    expect(keyCutOffOf(routine, { account })).toBeUndefined();
  });

  test('when an account key is rotated without an overlap, then the account’s keys are cut, its webhooks under its owner key', () => {
    const event = anEvent(
      EVENT_TYPES.recipientAccountKeyRotated,
      { accountId, keyDigest: next, previousKeyDigest: null, previousKeyExpiresAt: null, rotatedAt: cutAt.toISOString(), revision: 4 },
      stamp,
    );

    expect(keyCutOffOf(event, { account })).toEqual({
      keyOwner: `account:${accountId}`,
      reason: 'key_ended',
      at: cutAt.toISOString(),
      spareKeyDigest: next,
      cutKeyDigests: [current, previous],
    });
  });

  test('when a leak is reported (a grant revoked for it, a previous grant key, an account key), then key_leaked and nothing is spared', () => {
    const revoked = anEvent(
      EVENT_TYPES.authorizationRevoked,
      { clientId, organizationId, revokedAt: cutAt.toISOString(), revision: 4, revocationReason: 'key_leaked' },
      stamp,
    );
    const previousLeaked = anEvent(
      EVENT_TYPES.authorizationPreviousKeyRevoked,
      { clientId, organizationId, previousKeyDigest: previous, revokedAt: cutAt.toISOString(), revision: 4 },
      stamp,
    );
    const accountLeaked = anEvent(
      EVENT_TYPES.recipientAccountKeyRevoked,
      { accountId, keyDigest: current, revokedAt: cutAt.toISOString(), revision: 4 },
      stamp,
    );

    expect(keyCutOffOf(revoked, { credential })).toEqual({
      keyOwner: clientId,
      reason: 'key_leaked',
      at: cutAt.toISOString(),
      cutKeyDigests: [current, previous],
    });
    expect(keyCutOffOf(previousLeaked, { credential })).toMatchObject({
      keyOwner: clientId,
      reason: 'key_leaked',
      cutKeyDigests: [previous],
    });
    expect(keyCutOffOf(accountLeaked, { account })).toMatchObject({
      keyOwner: `account:${accountId}`,
      reason: 'key_leaked',
      cutKeyDigests: [current],
    });
    expect(keyCutOffOf(revoked, { credential })).not.toHaveProperty('spareKeyDigest');
  });

  test('when a grant is revoked by its organization or released, then no key is cut off: the grant ended, its webhooks get no more scores anyway', () => {
    for (const revocationReason of ['organization', 'released_by_recipient'] as const) {
      const revoked = anEvent(
        EVENT_TYPES.authorizationRevoked,
        { clientId, organizationId, revokedAt: cutAt.toISOString(), revision: 4, revocationReason },
        stamp,
      );
      expect(keyCutOffOf(revoked, { credential })).toBeUndefined();
    }
  });

  test('when the key_leaked alert of a leaked previous key comes, then it is the same cut-off again, at the leak’s time', () => {
    const alerted = anEvent(
      EVENT_TYPES.authorizationAlerted,
      {
        clientId,
        organizationId,
        alertId: 'alr_AAAAAAAAAAAAAAAAAAAA',
        alert: 'authorization.key_leaked',
        at: cutAt.toISOString(),
        revision: 5,
      },
      { time: cutAt },
    );
    const firstUse = anEvent(
      EVENT_TYPES.authorizationAlerted,
      {
        clientId,
        organizationId,
        alertId: 'alr_BBBBBBBBBBBBBBBBBBBB',
        alert: 'authorization.first_use',
        at: cutAt.toISOString(),
        revision: 5,
      },
      { time: cutAt },
    );

    expect(keyCutOffOf(alerted, { credential })).toEqual({
      keyOwner: clientId,
      reason: 'key_leaked',
      at: cutAt.toISOString(),
      cutKeyDigests: [],
    });
    expect(keyCutOffOf(firstUse, { credential })).toBeUndefined();
  });
});

describe('cutOffDisables: which webhooks a cut-off disables (decision 50)', () => {
  const before = new Date(cutAt.getTime() - 60_000).toISOString();
  const after = new Date(cutAt.getTime() + 60_000).toISOString();
  const webhook = (fields: Partial<KeyedWebhook> = {}): KeyedWebhook => ({
    status: 'active',
    createdAt: before,
    keyDigest: current,
    ...fields,
  });
  const ended: KeyCutOff = {
    keyOwner: clientId,
    reason: 'key_ended',
    at: cutAt.toISOString(),
    spareKeyDigest: next,
    cutKeyDigests: [current, previous],
  };
  const leaked: KeyCutOff = { keyOwner: clientId, reason: 'key_leaked', at: cutAt.toISOString(), cutKeyDigests: [previous] };

  test('when a rotation without overlap cuts the keys off, then every webhook made before it is disabled, whichever older key made it, paused or failing too', () => {
    for (const made of [
      webhook(),
      webhook({ keyDigest: previous }),
      webhook({ keyDigest: oldest }),
      webhook({ status: 'paused' }),
      webhook({ status: 'disabled', disabledReason: 'delivery_failures' }),
      // A record from before keys were recorded, and a disabled one from before reasons were.
      webhook({ keyDigest: undefined }),
      webhook({ status: 'disabled' }),
    ]) {
      expect(cutOffDisables(made, ended)).toBe(true);
    }
  });

  test('when a webhook was recorded with the new key, then the rotation spares it', () => {
    expect(cutOffDisables(webhook({ keyDigest: next }), ended)).toBe(false);
    expect(cutOffDisables(webhook({ keyDigest: next, createdAt: after }), ended)).toBe(false);
  });

  test('when the old key made one after the cut-off but before it reached the notifier, then it is disabled all the same', () => {
    expect(cutOffDisables(webhook({ createdAt: after }), ended)).toBe(true);
    expect(cutOffDisables(webhook({ createdAt: after, keyDigest: previous }), leaked)).toBe(true);
  });

  test('when the event is applied again later (a replay), then what a later key made or brought back since is left alone', () => {
    expect(cutOffDisables(webhook({ createdAt: after, keyDigest: next }), leaked)).toBe(false);
    expect(cutOffDisables(webhook({ activeSince: after, keyDigest: digest('4') }), ended)).toBe(false);
  });

  test('when a leak is reported, then every webhook made before it is disabled, the current key’s too', () => {
    expect(cutOffDisables(webhook({ keyDigest: current }), leaked)).toBe(true);
    expect(cutOffDisables(webhook({ keyDigest: next }), leaked)).toBe(true);
  });

  test('when a webhook is disabled for its key already, then it stays as it is (its reason and time)', () => {
    const endedBefore = webhook({ status: 'disabled', disabledReason: 'key_ended' });

    expect(isDisabledForItsKey(endedBefore)).toBe(true);
    expect(cutOffDisables(endedBefore, leaked)).toBe(false);
    expect(isDisabledForItsKey(webhook({ status: 'disabled', disabledReason: 'delivery_failures' }))).toBe(false);
  });
});

describe('the key_leaked alert says how many webhooks the leak disabled (decision 50)', () => {
  /** The delivery an organization's webhook for `alert` gets of a revocation for `revocationReason` that disabled 3 webhooks. */
  function deliveryOfRevocation(revocationReason: 'key_leaked' | 'released_by_recipient', alert: AlertType) {
    const revoked = anEvent(
      EVENT_TYPES.authorizationRevoked,
      { clientId, organizationId, revokedAt: cutAt.toISOString(), revision: 4, revocationReason },
      stamp,
    );
    const trigger = alertTriggerOf(revoked, { credential }, { webhooksDisabled: 3 });
    return alertDeliveriesFor(trigger!, { id: 'wh_AAAAAAAAAAAAAAAA', events: [alert], status: 'active' })[0];
  }

  test('when a grant is revoked for a leaked key, then the alert’s data carries webhooksDisabled, valid as the documented payload', () => {
    const delivery = deliveryOfRevocation('key_leaked', 'authorization.key_leaked');

    expect(delivery?.payload).toEqual({
      type: 'authorization.key_leaked',
      timestamp: cutAt.toISOString(),
      data: { clientId, webhooksDisabled: 3 },
    });
    expect(webhookPayloadSchema.safeParse(delivery?.payload).success).toBe(true);
  });

  test('when another alert is planned, then its data is as it was', () => {
    const delivery = deliveryOfRevocation('released_by_recipient', 'authorization.released');

    expect(delivery?.payload.data).toEqual({ clientId });
  });
});
