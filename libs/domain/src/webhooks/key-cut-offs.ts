import {
  EVENT_TYPES,
  type AuthorizationKeyRotated,
  type DomainEvent,
  type KeyDisabledReason,
  type RecipientAccountKeyRotated,
  type WebhookDisabledReason,
  type WebhookStatus,
} from '@rsd/contracts';
import type { RecipientAccountView } from '../views/account-views';
import type { CredentialView } from '../views/credential-view';
import { consumeEvents, type EventConsumers } from '../views/view';
import type { NotifierStateBefore } from './notifications';
import { webhookOwnerKey } from './webhook-owner';

/**
 * Decision 50: webhooks answer to the key that made them. A key cut off as compromised (a rotation
 * without an overlap, or a leak report) takes with it the webhooks of its holder (a grant, or a
 * recipient account) that the cut-off concerns, before their next delivery. Decided here without
 * I/O; the notifier's store applies it (`disableWebhooksOfKeys`) as it consumes the events in order.
 */
export interface KeyCutOff {
  /**
   * The holder of the keys, as `webhookOwnerKey` names it: a grant's Client ID or `account:rcp_…`.
   * Concerned are its webhooks, and those its keys made for another owner (`keyOwner`: a grant's
   * webhook made with its account's key).
   */
  keyOwner: string;
  reason: KeyDisabledReason;
  /** When the key was cut off (the event's time): the `disabledAt` of every webhook it disables. */
  at: string;
  /** Spared: the webhooks recorded with this key digest, a rotation's new current key (which only its holder has). */
  spareKeyDigest?: string;
  /**
   * The digests of the keys cut off: a webhook recorded with one of them is disabled even when it was
   * made after `at`, in the moment before the cut-off reached the notifier.
   */
  cutKeyDigests: readonly string[];
}

/** What of a stored webhook the rule reads. */
export interface KeyedWebhook {
  status: WebhookStatus;
  disabledReason?: WebhookDisabledReason | null;
  createdAt: string;
  activeSince?: string;
  keyDigest?: string;
}

/** Whether a webhook was disabled for its key: it comes back only with its URL set again. */
export function isDisabledForItsKey(webhook: Pick<KeyedWebhook, 'status' | 'disabledReason'>): boolean {
  return webhook.status === 'disabled' && (webhook.disabledReason === 'key_ended' || webhook.disabledReason === 'key_leaked');
}

/**
 * Whether the cut-off disables this webhook (one of its key owner's): one already disabled for its key
 * stays as it is, and one recorded with the spared key is spared. Any other is disabled when it was
 * made or last re-enabled at or before the cut (so a replay of an old event leaves alone what was made
 * or brought back since, by a later key), or when the key it was recorded with is one of those cut
 * off, whenever it was made. A record without a key digest (from before keys were recorded) was made
 * by an earlier key: never the spared one.
 */
export function cutOffDisables(webhook: KeyedWebhook, cutOff: KeyCutOff): boolean {
  if (isDisabledForItsKey(webhook)) return false;
  if (cutOff.spareKeyDigest !== undefined && webhook.keyDigest === cutOff.spareKeyDigest) return false;
  const keyedSince = Date.parse(webhook.activeSince ?? webhook.createdAt);
  if (keyedSince <= Date.parse(cutOff.at)) return true;
  return webhook.keyDigest !== undefined && cutOff.cutKeyDigests.includes(webhook.keyDigest);
}

/** Each event type that may cut a key off, with the cut-off it makes (or none, for a routine rotation). */
export const KEY_CUT_OFFS_BY_EVENT = {
  [EVENT_TYPES.authorizationKeyRotated]: (event, before) =>
    event.data.previousKeyDigest !== null ? undefined : keyEnded(event, event.data.clientId, keysOf(before.credential)),
  [EVENT_TYPES.recipientAccountKeyRotated]: (event, before) =>
    event.data.previousKeyDigest !== null ? undefined : keyEnded(event, accountOwner(event.data.accountId), keysOf(before.account)),
  [EVENT_TYPES.authorizationRevoked]: (event, before) =>
    event.data.revocationReason !== 'key_leaked'
      ? undefined
      : { keyOwner: event.data.clientId, reason: 'key_leaked', at: event.time, cutKeyDigests: keysOf(before.credential) },
  [EVENT_TYPES.authorizationPreviousKeyRevoked]: (event) => ({
    keyOwner: event.data.clientId,
    reason: 'key_leaked',
    at: event.time,
    cutKeyDigests: [event.data.previousKeyDigest],
  }),
  [EVENT_TYPES.recipientAccountKeyRevoked]: (event) => ({
    keyOwner: accountOwner(event.data.accountId),
    reason: 'key_leaked',
    at: event.time,
    cutKeyDigests: [event.data.keyDigest],
  }),
  [EVENT_TYPES.authorizationAlerted]: (event) =>
    event.data.alert !== 'authorization.key_leaked'
      ? undefined
      : { keyOwner: event.data.clientId, reason: 'key_leaked', at: event.data.at, cutKeyDigests: [] },
} satisfies Partial<EventConsumers<[before: NotifierStateBefore], KeyCutOff | undefined>>;

/** A rotation without an overlap: every key of the holder but the new one is cut off. */
function keyEnded(event: AuthorizationKeyRotated | RecipientAccountKeyRotated, keyOwner: string, cutKeyDigests: string[]): KeyCutOff {
  return { keyOwner, reason: 'key_ended', at: event.time, spareKeyDigest: event.data.keyDigest, cutKeyDigests };
}

/** The key owner of a recipient account's webhooks. */
function accountOwner(accountId: string): string {
  return webhookOwnerKey({ kind: 'portfolio', accountId });
}

/**
 * The cut-off an event is, or undefined. `key_ended`: a grant's or an account's key rotated with no
 * overlap (the event has no previous key), every key but the new one cut off. `key_leaked`: a grant
 * revoked because its key leaked, the previous key of a grant or an account key reported leaked, and
 * the key_leaked alert of a grant whose previous key leaked (written with that event, at its time:
 * applied again, it changes nothing and counts the webhooks that leak disabled). A routine rotation
 * (with an overlap) is none: the webhooks go on with the new key.
 */
export const keyCutOffOf: (event: DomainEvent, before: NotifierStateBefore) => KeyCutOff | undefined = consumeEvents<
  [before: NotifierStateBefore],
  KeyCutOff | undefined
>(KEY_CUT_OFFS_BY_EVENT, undefined);

/** The digests a holder's keys had before the event: its current key's and its previous one's. */
function keysOf(holder: Pick<CredentialView | RecipientAccountView, 'keyDigest' | 'previousKeyDigest'> | undefined): string[] {
  return [holder?.keyDigest, holder?.previousKeyDigest].filter((digest): digest is string => typeof digest === 'string');
}
