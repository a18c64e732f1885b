import type { OutboxEntry } from '@rsd/ports';

/*
 * The outbox of a document of the authorizations' collection (a grant, a recipient account, an access
 * review): the events its writes owe the event log, kept with it and written in the same operation,
 * and a flag the relay's index finds owing documents by.
 */

/** An entry as the document keeps it: its four fields, nothing a caller added. */
export function entryOf(entry: OutboxEntry): OutboxEntry {
  return { id: entry.id, topic: entry.topic, key: entry.key, value: entry.value };
}

/** A new document's outbox fields. */
export function outboxFieldsOf(outbox: readonly OutboxEntry[]): { outbox: OutboxEntry[]; hasOutbox: boolean } {
  return { outbox: outbox.map(entryOf), hasOutbox: outbox.length > 0 };
}
