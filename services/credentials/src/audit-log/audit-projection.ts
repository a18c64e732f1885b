import { authorizationEventSchema, EVENT_TYPES, type AuditRecord, type AuthorizationEvent } from '@rsd/contracts';
import { auditRecordOf } from '@rsd/domain';
import type { Logger } from '@rsd/platform';
import type { AuditLogStore, EventRecord } from '@rsd/ports';

/**
 * Decision 54: follows the authorizations' topic into the audit view, from the beginning (the event log
 * is the record: the view can always be made again from it). An event that carries who made its change
 * becomes an entry; the others (alerts, events written before the trail) are passed by, as is a record
 * that is no event (logged: anyone with access to the topic can write to it). Each event is kept once,
 * so a record delivered again changes nothing.
 */
export function auditProjection(store: Pick<AuditLogStore, 'add'>, log: Logger) {
  const entryOf = (record: EventRecord): AuditRecord | undefined => {
    const event = eventOf(record);
    if (!event) {
      log.warn(
        { topic: record.topic, partition: record.partition, offset: record.offset },
        'audit trail skipped a record that is no event',
      );
      return undefined;
    }
    return auditRecordOf(event);
  };
  return {
    handle: async (record: EventRecord) => {
      const entry = entryOf(record);
      if (entry) await store.add([entry]);
    },
    handleBatch: async (records: readonly EventRecord[]) => {
      await store.add(records.map(entryOf).filter((entry) => entry !== undefined));
    },
  };
}

function eventOf(record: EventRecord): AuthorizationEvent | undefined {
  if (record.parsed) {
    if (!('event' in record.parsed) || record.parsed.event.type === EVENT_TYPES.scoreCalculated) return undefined;
    return record.parsed.event;
  }
  try {
    const parsed = authorizationEventSchema.safeParse(JSON.parse(record.value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
