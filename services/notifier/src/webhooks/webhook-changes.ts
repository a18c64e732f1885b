import { randomUUID } from 'node:crypto';
import { TOPICS, type WebhookChanged } from '@rsd/contracts';
import { webhookDisabledForFailures } from '@rsd/domain';
import type { Logger } from '@rsd/platform';
import type { EventLog, StoredWebhook } from '@rsd/ports';

/**
 * Decision 54: appends each change to a webhook or an alert subscription to the event log, keyed by its
 * organization so that one organization's changes keep their order. The credentials service's audit
 * view follows the topic. Appended after the change is written and before it is answered; on the
 * embedded runtime the answer waits for the view too, so the trail shows the change at once.
 *
 * The notifier's store has no outbox: a log that refuses the append leaves the change made and
 * answered, and its entry in the notifier's own log (at `error`, the event whole: it carries no URL,
 * key or secret) instead of the trail.
 */
export function webhookChangeRecorder(eventLog: Pick<EventLog, 'append'>, log: Logger): (event: WebhookChanged) => Promise<void> {
  return async (event) => {
    try {
      await eventLog.append(TOPICS.webhookChanges, [{ key: event.data.organizationId, value: JSON.stringify(event) }]);
    } catch (error) {
      log.error({ err: error, event }, 'a change to a webhook was made but not recorded in the audit trail');
    }
  };
}

/**
 * Decision 45's lifecycle in decision 54's trail: a webhook the delivery worker disabled after its
 * deliveries kept failing is recorded as `webhook.disabled` by the system (`delivery-failures`), a
 * grant's and an organization's alike; a recipient account's is in no organization's trail.
 */
export function disabledForFailuresRecorder(
  recordChange: (event: WebhookChanged) => Promise<void>,
): (webhook: StoredWebhook, at: Date) => Promise<void> {
  return async (webhook, at) => {
    const { id, clientId: ownerKey, organizationId } = webhook;
    const change = webhookDisabledForFailures({ id, ownerKey, organizationId }, { id: randomUUID(), time: at });
    if (change) await recordChange(change);
  };
}
