import type { AccessRecord } from '@rsd/contracts';
import { openAccessRecords, type EventCipher } from '@rsd/consumers';
import type { Logger } from '@rsd/platform';
import type { AccessLogStore, AuthorizationStore, EventRecord } from '@rsd/ports';

/**
 * The records of one access-log message with their addresses opened (decision 56: an erased grant's
 * are null), or undefined for one that is passed by (no batch, or a sealed part that does not open),
 * logged with its reason and position; a key store that does not answer throws (the message comes again).
 */
export async function accessRecordsOf(
  record: EventRecord,
  cipher: Pick<EventCipher, 'open'>,
  log: Logger,
): Promise<AccessRecord[] | undefined> {
  const opened = await openAccessRecords(record.value, cipher);
  if ('records' in opened) return opened.records;
  log.warn(
    { topic: record.topic, partition: record.partition, offset: record.offset, reason: opened.reason },
    'skipped an access-log message that cannot be read',
  );
  return undefined;
}

/**
 * Follows the access-log stream into the credentials service's store (distributed runtime). A
 * message that is not a valid batch, or whose sealed addresses do not open, is logged and skipped:
 * access records are not events, and one bad message must not hold up the ones behind it. A store that fails throws, and the record is
 * tried again (the store keeps each record once).
 */
export function accessLogProjection(
  store: Pick<AccessLogStore, 'add'>,
  grants: Pick<AuthorizationStore, 'knownClientIds'>,
  cipher: Pick<EventCipher, 'open'>,
  log: Logger,
): (record: EventRecord) => Promise<void> {
  return async (record) => {
    const records = await accessRecordsOf(record, cipher, log);
    if (!records) return;
    // Decision 56: a read recorded after its organization was purged (the read API's batch and the
    // stream's lag outrun the offboarding) names a grant that is gone, and is not kept.
    const known = await grants.knownClientIds(records.map((entry) => entry.clientId));
    const kept = records.filter((entry) => known.has(entry.clientId));
    if (kept.length > 0) await store.add(kept);
  };
}
