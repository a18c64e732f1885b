import { accessRecordBatchSchema, type AccessRecord } from '@rsd/contracts';
import { parsedJson, type Logger } from '@rsd/platform';
import type { AccessLogStore, AuthorizationStore, EventRecord } from '@rsd/ports';

/** The records of one access-log message, or undefined for one that is not a batch. */
export function accessRecordBatchOf(value: string): AccessRecord[] | undefined {
  return parsedJson(value, accessRecordBatchSchema)?.records;
}

/**
 * Follows the access-log stream into the credentials service's store (distributed runtime). A
 * message that is not a valid batch is logged and skipped: access records are not events, and one
 * bad message must not hold up the ones behind it. A store that fails throws, and the record is
 * tried again (the store keeps each record once).
 */
export function accessLogProjection(
  store: Pick<AccessLogStore, 'add'>,
  grants: Pick<AuthorizationStore, 'knownClientIds'>,
  log: Logger,
): (record: EventRecord) => Promise<void> {
  return async (record) => {
    const records = accessRecordBatchOf(record.value);
    if (!records) {
      log.warn(
        { topic: record.topic, partition: record.partition, offset: record.offset },
        'skipped an access-log message that is not a batch of records',
      );
      return;
    }
    // Decision 56: a read recorded after its organization was purged (the read API's batch and the
    // stream's lag outrun the offboarding) names a grant that is gone, and is not kept.
    const known = await grants.knownClientIds(records.map((entry) => entry.clientId));
    const kept = records.filter((entry) => known.has(entry.clientId));
    if (kept.length > 0) await store.add(kept);
  };
}
