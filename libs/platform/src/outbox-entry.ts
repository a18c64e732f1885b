import { partitionKeyOf, topicOf, type AuthorizationEvent } from '@rsd/contracts';
import type { OutboxEntry } from '@rsd/ports';

/** The outbox entry that owes `event` to the event log, keyed so each Client ID's events stay in order. */
export function outboxEntryOf(event: AuthorizationEvent): OutboxEntry {
  return { id: event.id, topic: topicOf(event), key: partitionKeyOf(event), value: JSON.stringify(event) };
}
