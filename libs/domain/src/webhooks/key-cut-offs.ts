import { EVENT_TYPES, type DomainEvent, type KeyDisabledReason, type WebhookDisabledReason, type WebhookStatus } from '@rsd/contracts';
import type { RecipientAccountView } from '../views/account-views';
import type { CredentialView } from '../views/credential-view';
import { unhandled } from '../views/view';
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

/**
 * The cut-off an event is, or undefined. `key_ended`: a grant's or an account's key rotated with no
 * overlap (the event has no previous key), every key but the new one cut off. `key_leaked`: a grant
 * revoked because its key leaked, the previous key of a grant or an account key reported leaked, and
 * the key_leaked alert of a grant whose previous key leaked (written with that event, at its time:
 * applied again, it changes nothing and counts the webhooks that leak disabled). A routine rotation
 * (with an overlap) is none: the webhooks go on with the new key.
 */
export function keyCutOffOf(event: DomainEvent, before: NotifierStateBefore): KeyCutOff | undefined {
  switch (event.type) {
    case EVENT_TYPES.authorizationKeyRotated:
      if (event.data.previousKeyDigest !== null) return undefined;
      return {
        keyOwner: event.data.clientId,
        reason: 'key_ended',
        at: event.time,
        spareKeyDigest: event.data.keyDigest,
        cutKeyDigests: keysOf(before.credential),
      };
    case EVENT_TYPES.recipientAccountKeyRotated:
      if (event.data.previousKeyDigest !== null) return undefined;
      return {
        keyOwner: webhookOwnerKey({ kind: 'portfolio', accountId: event.data.accountId }),
        reason: 'key_ended',
        at: event.time,
        spareKeyDigest: event.data.keyDigest,
        cutKeyDigests: keysOf(before.account),
      };
    case EVENT_TYPES.authorizationRevoked:
      if (event.data.revocationReason !== 'key_leaked') return undefined;
      return { keyOwner: event.data.clientId, reason: 'key_leaked', at: event.time, cutKeyDigests: keysOf(before.credential) };
    case EVENT_TYPES.authorizationPreviousKeyRevoked:
      return { keyOwner: event.data.clientId, reason: 'key_leaked', at: event.time, cutKeyDigests: [event.data.previousKeyDigest] };
    case EVENT_TYPES.recipientAccountKeyRevoked:
      return {
        keyOwner: webhookOwnerKey({ kind: 'portfolio', accountId: event.data.accountId }),
        reason: 'key_leaked',
        at: event.time,
        cutKeyDigests: [event.data.keyDigest],
      };
    case EVENT_TYPES.authorizationAlerted:
      if (event.data.alert !== 'authorization.key_leaked') return undefined;
      return { keyOwner: event.data.clientId, reason: 'key_leaked', at: event.data.at, cutKeyDigests: [] };
    case EVENT_TYPES.authorizationCreated:
    case EVENT_TYPES.authorizationExpired:
    case EVENT_TYPES.authorizationKeyClaimed:
    case EVENT_TYPES.authorizationJoinedAccount:
    case EVENT_TYPES.recipientAccountCreated:
    case EVENT_TYPES.scoreCalculated:
      return undefined;
    default:
      return unhandled(event);
  }
}

/** The digests a holder's keys had before the event: its current key's and its previous one's. */
function keysOf(holder: Pick<CredentialView | RecipientAccountView, 'keyDigest' | 'previousKeyDigest'> | undefined): string[] {
  return [holder?.keyDigest, holder?.previousKeyDigest].filter((digest): digest is string => typeof digest === 'string');
}
