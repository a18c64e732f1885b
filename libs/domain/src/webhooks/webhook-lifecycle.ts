import type { UpdateWebhookRequest, WebhookConditions, WebhookEventType, WebhookStatus } from '@rsd/contracts';

/**
 * Decision 45's rules for a webhook's life after its creation, whoever owns it, without I/O: what a
 * change, a rotation and a test do to the subscription. The notifier's handlers check the caller,
 * the target and the scopes, then store what these return.
 */
export interface WebhookState {
  url: string;
  events: WebhookEventType[];
  status: WebhookStatus;
  disabledAt: string | null;
  conditions?: WebhookConditions;
  activeSince?: string;
  sealedSecret: string;
  previousSealedSecret?: string | null;
  previousSecretExpiresAt?: string | null;
}

/**
 * A change as asked (its URL already checked against decision 28). `enabled: true` brings back one
 * paused or disabled after failures, and it hears of events from now on, not of what happened
 * meanwhile; `enabled: false` pauses an active one (one disabled after failures stays disabled: it
 * was not delivering either, and its status keeps saying why). Conditions are replaced as a whole.
 */
export function changedWebhook<T extends WebhookState>(webhook: T, change: UpdateWebhookRequest, now: Date): T {
  const changed: T = { ...webhook };
  if (change.url !== undefined) changed.url = change.url;
  if (change.events !== undefined) changed.events = [...change.events];
  if (change.conditions !== undefined) changed.conditions = { ...change.conditions };
  if (change.enabled === true && webhook.status !== 'active') {
    changed.status = 'active';
    changed.disabledAt = null;
    changed.activeSince = now.toISOString();
  }
  if (change.enabled === false && webhook.status === 'active') changed.status = 'paused';
  return changed;
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
