import type { UpdateWebhookRequest, WebhookConditions, WebhookDisabledReason, WebhookEventType, WebhookStatus } from '@rsd/contracts';
import { isDisabledForItsKey } from './key-cut-offs';

/**
 * Decision 45's rules for a webhook's life after its creation, whoever owns it, without I/O: what a
 * change, a rotation and a test do to the subscription. The notifier's handlers check the caller,
 * the target and the scopes, then store what these return.
 */
export interface WebhookState {
  url: string;
  events: WebhookEventType[];
  status: WebhookStatus;
  /** When it was disabled (after 24 h of failed deliveries, or when its key was cut off); null while active. */
  disabledAt: string | null;
  /**
   * Why it is disabled (decision 50); null or absent while active or paused. A disabled record from
   * before reasons were kept has none: it was disabled after failures.
   */
  disabledReason?: WebhookDisabledReason | null;
  /**
   * Decision 50: the digest of the key that created it or last set its URL, never the key. Absent for
   * an organization's webhook (a token, not a key) and in records from before keys were recorded: made
   * by an earlier key, so never the current one.
   */
  keyDigest?: string;
  /**
   * Whose key that is (`webhookOwnerKey` of its holder): the owner's own, or for a grant's webhook
   * managed with its account's key, the account's. Absent: the owner's.
   */
  keyOwner?: string;
  /** Filters `score.updated` (decision 45); absent or `{}`: every change. */
  conditions?: WebhookConditions;
  /**
   * Since when it hears of events: its creation, or the last time it was re-enabled (events that
   * happened while it was paused or disabled are not delivered afterwards). Absent: `createdAt`.
   */
  activeSince?: string;
  /** The secret before the last rotation, sealed, while its overlap lasts (decision 45). */
  previousSealedSecret?: string | null;
  /** When the previous secret stops signing. */
  previousSecretExpiresAt?: string | null;
  /**
   * The signing secret sealed with the notifier's key (AES-256-GCM), never the secret itself: the
   * notifier must sign with it, so a digest will not do, but a copy of the store reveals nothing.
   */
  sealedSecret: string;
}

/** The key a change is made with (decision 50): a webhook records it when its URL is set. */
export interface ChangingKey {
  keyDigest: string;
  /** `webhookOwnerKey` of the key's holder: the webhook's owner, or the account whose key manages a grant's webhook. */
  keyOwner: string;
}

/**
 * A change as asked (its URL already checked against decision 28). `enabled: true` brings back one
 * paused or disabled, and it hears of events from now on, not of what happened meanwhile (one
 * disabled for its key only with its URL set in the same change: `reenableRefusal`); `enabled: false`
 * pauses an active one (one disabled stays disabled: it was not delivering either, and its status
 * keeps saying why). Conditions are replaced as a whole. A URL set records the key it was set with.
 */
export function changedWebhook<T extends WebhookState>(webhook: T, change: UpdateWebhookRequest, now: Date, by?: ChangingKey): T {
  const changed: T = { ...webhook };
  if (change.url !== undefined) {
    changed.url = change.url;
    if (by) Object.assign(changed, recordedKey(by));
  }
  if (change.events !== undefined) changed.events = [...change.events];
  if (change.conditions !== undefined) changed.conditions = { ...change.conditions };
  if (change.enabled === true && webhook.status !== 'active') {
    changed.status = 'active';
    changed.disabledAt = null;
    changed.disabledReason = null;
    changed.activeSince = now.toISOString();
  }
  if (change.enabled === false && webhook.status === 'active') changed.status = 'paused';
  return changed;
}

/** What a webhook records of the key that made it or set its URL: its digest and its holder, never the key. */
export function recordedKey(by: ChangingKey): Pick<WebhookState, 'keyDigest' | 'keyOwner'> {
  return { keyDigest: by.keyDigest, keyOwner: by.keyOwner };
}

/**
 * Decision 50: a webhook disabled because the key that made it was cut off (`key_ended`) or leaked
 * (`key_leaked`) answers to the current key only once that key sets its URL again: re-enabling it
 * without a URL is refused, and this says why (for the `url` field); undefined when the change may go on.
 */
export function reenableRefusal(webhook: WebhookState, change: UpdateWebhookRequest): string | undefined {
  if (change.enabled !== true || change.url !== undefined || !isDisabledForItsKey(webhook)) return undefined;
  const why =
    webhook.disabledReason === 'key_leaked' ? 'a key of its grant or account was reported leaked' : 'the key that made it was cut off';
  return `is required to re-enable this webhook (disabledReason ${webhook.disabledReason}: ${why}): set its URL again, with enabled: true`;
}

/** Why the webhook is disabled, as its resource says: null unless disabled; a record from before reasons were kept was disabled after failures. */
export function disabledReasonOf(webhook: Pick<WebhookState, 'status' | 'disabledReason'>): WebhookDisabledReason | null {
  return webhook.status === 'disabled' ? (webhook.disabledReason ?? 'delivery_failures') : null;
}

/**
 * A new secret; the current one goes on signing beside it for `overlapSeconds` (0: not at all). A
 * rotation during an overlap ends the older secret's at once: a delivery carries at most two signatures.
 */
export function rotatedWebhook<T extends WebhookState>(webhook: T, newSealedSecret: string, overlapSeconds: number, now: Date): T {
  const overlapEnds = new Date(now.getTime() + overlapSeconds * 1000).toISOString();
  return {
    ...webhook,
    sealedSecret: newSealedSecret,
    previousSealedSecret: overlapSeconds > 0 ? webhook.sealedSecret : null,
    previousSecretExpiresAt: overlapSeconds > 0 ? overlapEnds : null,
  };
}

/** The previous secret, sealed, while it still signs at `now`. */
export function previousSecretAt(webhook: WebhookState, now: Date): string | undefined {
  const { previousSealedSecret, previousSecretExpiresAt } = webhook;
  if (!previousSealedSecret || !previousSecretExpiresAt) return undefined;
  return now.getTime() < Date.parse(previousSecretExpiresAt) ? previousSealedSecret : undefined;
}

/**
 * Whether an event that happened at `eventTime` is news to the webhook: it hears of what happens
 * after it was made, or after it was last re-enabled.
 */
export function hearsOf(webhook: { createdAt: string; activeSince?: string | undefined }, eventTime: string): boolean {
  return Date.parse(webhook.activeSince ?? webhook.createdAt) <= Date.parse(eventTime);
}
