import type { DomainEvent } from '@rsd/contracts';
import { keyCutOffOf, type KeyCutOff, type NotifierStateBefore } from '@rsd/domain';
import type { Logger } from '@rsd/platform';
import type { WebhookStore } from '@rsd/ports';

/** The event's cut-off, once applied: how many webhooks it disabled, and a second look once the views moved on. */
export interface AppliedCutOff {
  webhooksDisabled: number;
  /**
   * Applies it once more after the views took the event in: a webhook written with a cut key by a
   * request that was authenticated just before (its view not moved on yet) is disabled too. No request
   * authenticated after that holds the cut key. Changes nothing else (the same cut-off again).
   */
  again(): Promise<void>;
}

const NONE: AppliedCutOff = { webhooksDisabled: 0, again: () => Promise.resolve() };

/**
 * Decision 50: webhooks answer to the key that made them. Called by the projection for each event,
 * in order and before the event's deliveries are planned: a key cut off as compromised (a rotation
 * without an overlap, a leak report) disables the webhooks it concerns (the domain's `keyCutOffOf`)
 * before their next delivery, and the delivery worker drops what was queued for them.
 */
export async function applyKeyCutOff(
  deps: { store: WebhookStore; log: Logger },
  event: DomainEvent,
  before: NotifierStateBefore,
): Promise<AppliedCutOff> {
  const cutOff = keyCutOffOf(event, before);
  if (!cutOff) return NONE;
  const webhooksDisabled = await deps.store.disableWebhooksOfKeys(cutOff);
  if (webhooksDisabled > 0) logDisabled(deps.log, cutOff, webhooksDisabled);
  return {
    webhooksDisabled,
    again: async () => {
      await deps.store.disableWebhooksOfKeys(cutOff);
    },
  };
}

function logDisabled(log: Logger, cutOff: KeyCutOff, webhooksDisabled: number): void {
  log.info({ keyOwner: cutOff.keyOwner, reason: cutOff.reason, webhooksDisabled }, 'webhooks disabled with the key that made them');
}
