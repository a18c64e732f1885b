import {
  authorizationEventSchema,
  EVENT_TYPES,
  TOPICS,
  webhookChangedSchema,
  type AuditRecord,
  type AuthorizationEvent,
} from '@rsd/contracts';
import { auditRecordOf, auditRecordOfWebhookChange } from '@rsd/domain';
import type { AuditLogStore, EventRecord } from '@rsd/ports';

/** The part of a logger the audit projection uses; a pino `Logger` fits it as is. */
export interface AuditProjectionLogger {
  warn(details: object, message: string): void;
}

/** What the audit view follows: the credentials service's changes, and the notifier's to webhooks and alert subscriptions. */
export const AUDITED_TOPICS = [TOPICS.authorizations, TOPICS.webhookChanges];

/**
 * Decision 54: follows the authorizations' and the webhook changes' topics into the audit view, from the beginning (the event log
 * is the record: the view can always be made again from it). An event that carries who made its change
 * becomes an entry; the others (alerts, events written before the trail) are passed by, as is a record
 * that is no event (logged: anyone with access to the topic can write to it). Each event is kept once,
 * so a record delivered again changes nothing.
 */
export function auditProjection(
  store: Pick<AuditLogStore, 'add'>,
  log: AuditProjectionLogger,
  /** Decision 56: true for an organization offboarded, whose entries a late or replayed event must not bring back. */
  offboarded: (organizationId: string) => Promise<boolean> = () => Promise.resolve(false),
) {
  const kept = async (entries: readonly AuditRecord[]): Promise<AuditRecord[]> => {
    const gone = new Set<string>();
    for (const organizationId of new Set(entries.map((entry) => entry.organizationId))) {
      if (await offboarded(organizationId)) gone.add(organizationId);
    }
    return entries.filter((entry) => !gone.has(entry.organizationId));
  };
  const entryOf = (record: EventRecord): AuditRecord | undefined => {
    // An erased organization's event (decision 56) has no entry: a rebuilt trail holds nothing of it.
    if (record.parsed && 'erased' in record.parsed) return undefined;
    if (record.topic === TOPICS.webhookChanges) {
      // The notifier's events are no domain events: parsed here, whatever a log parsed for the domain's
      // consumers, from the value the log opened (decision 56) when it was sealed.
      const change = webhookChangedSchema.safeParse(jsonOf(record.opened ?? record.value));
      if (change.success) return auditRecordOfWebhookChange(change.data);
    } else {
      const event = eventOf(record);
      // An event that records no one's change (an alert, or one from before the trail) has no entry.
      if (event) return auditRecordOf(event);
    }
    log.warn({ topic: record.topic, partition: record.partition, offset: record.offset }, 'audit trail skipped a record that is no event');
    return undefined;
  };
  return {
    handle: async (record: EventRecord) => {
      const entry = entryOf(record);
      if (entry) await store.add(await kept([entry]));
    },
    handleBatch: async (records: readonly EventRecord[]) => {
      await store.add(await kept(records.map(entryOf).filter((entry) => entry !== undefined)));
    },
  };
}

function eventOf(record: EventRecord): AuthorizationEvent | undefined {
  if (record.parsed) {
    if (!('event' in record.parsed) || record.parsed.event.type === EVENT_TYPES.scoreCalculated) return undefined;
    return record.parsed.event;
  }
  const parsed = authorizationEventSchema.safeParse(jsonOf(record.value));
  return parsed.success ? parsed.data : undefined;
}

/** A record's value as JSON, or undefined when it is none. */
function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
