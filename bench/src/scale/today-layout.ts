import type { StoredAuthorization } from '@rsd/domain';
import type { OutgoingRecord } from '@rsd/ports';

/**
 * The data directory as the file-based embedded runtime keeps it, and as the SQLite importer reads
 * it on a first start. Written out here rather than imported because it is a format frozen on disk,
 * not code: the files this bench writes must stay readable by the new storage after the old
 * modules are gone.
 */
export const EVENT_LOG_FILE = 'events.ndjson';
export const AUTHORIZATION_STORE_FILE = 'authorizations.json';

/** One line of events.ndjson, byte for byte what the file event log's `formatLines` appends. */
export function eventLogLine(topic: string, record: OutgoingRecord): string {
  return `${JSON.stringify({ topic, key: record.key, value: record.value })}\n`;
}

/**
 * authorizations.json is `JSON.stringify({ authorizations: [{ record, outbox }, …] })` as the file
 * store's `save` writes it; written here in pieces, since at 1M records it is ~400 MB. The outbox
 * is empty: the Created event is already in the event log, as after the relay has published it.
 */
export const STORE_DOCUMENT_START = '{"authorizations":[';
export const STORE_DOCUMENT_END = ']}';

export function storeEntry(record: StoredAuthorization, first: boolean): string {
  return `${first ? '' : ','}${JSON.stringify({ record, outbox: [] })}`;
}
