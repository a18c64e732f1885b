import { TOPICS, type DomainEvent } from '@rsd/contracts';
import { READ_VIEWS } from '@rsd/domain';
import type { Logger } from '@rsd/platform';
import { parseRecord, projectEvents, purgeOffboarded } from '@rsd/consumers';
import type { EventLog, EventRecord, OutgoingRecord, Subscription, ViewStore } from '@rsd/ports';

export interface ProjectionDeps {
  eventLog: EventLog;
  views: ViewStore;
  log: Logger;
  groupId?: string;
  /** Told of each dead-lettered record and each failed projection attempt (for metrics). */
  onDeadLetter?: (topic: string) => void;
  onProjectionError?: () => void;
  /** False when replaying into a new database: the live projection already dead-lettered those records. */
  deadLetters?: boolean;
  /** A one-off run (a rebuild): its consumer group is removed when it closes. */
  ephemeral?: boolean;
}

export const DEFAULT_PROJECTION_GROUP_ID = 'read-api-projections';

/** What a dead-letter record holds: why it was refused, where it came from, and the record as it was. */
export interface DeadLetter {
  reason: string;
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: string;
}

/**
 * Keeps the read views up to date from the authorization and score topics, from offset zero for a
 * new group. Every record is validated; one that cannot be used goes to the dead-letter topic and
 * processing goes on. A failing view (a store that is away) throws instead, so the log retries the
 * record rather than losing it.
 */
export function startProjections({
  eventLog,
  views,
  log,
  groupId = DEFAULT_PROJECTION_GROUP_ID,
  onDeadLetter,
  onProjectionError,
  deadLetters = true,
  ephemeral = false,
}: ProjectionDeps): Promise<Subscription> {
  /**
   * Valid events are projected first and the unusable records dead-lettered after, in one append:
   * a batch that fails part-way is handed over again whole, and must not dead-letter twice.
   */
  const project = async (records: readonly EventRecord[]): Promise<void> => {
    const events: DomainEvent[] = [];
    const unusable: { record: EventRecord; reason: string }[] = [];
    for (const record of records) {
      const parsed = parseRecord(record);
      if ('reason' in parsed) unusable.push({ record, reason: parsed.reason });
      // An erased organization's event (decision 56) is passed by, not dead-lettered: a rebuilt view holds nothing of it.
      else if ('event' in parsed) events.push(parsed.event);
    }
    try {
      await projectEvents(views, READ_VIEWS, events);
      // Decision 56: an offboarded organization leaves nothing in the views, whatever came before its offboarding.
      await purgeOffboarded(events, {
        eventLog,
        service: 'read-api',
        purge: async (organizationId) => {
          for (const view of READ_VIEWS) await views.purgeOrganization(view, organizationId);
        },
        now: () => new Date(),
      });
    } catch (error) {
      onProjectionError?.();
      throw error;
    }
    if (!deadLetters || unusable.length === 0) return;
    await eventLog.append(
      TOPICS.deadLetter,
      unusable.map(({ record, reason }) => deadLetterOf(record, reason)),
    );
    for (const { record, reason } of unusable) {
      log.warn({ topic: record.topic, partition: record.partition, offset: record.offset, reason }, 'event dead-lettered');
      onDeadLetter?.(record.topic);
    }
  };
  return eventLog.subscribe({
    groupId,
    topics: [TOPICS.authorizations, TOPICS.scores],
    fromBeginning: true,
    ephemeral,
    handle: (record) => project([record]),
    handleBatch: project,
  });
}

/** Keyed like the original, so one key's dead letters keep their order. */
function deadLetterOf(record: EventRecord, reason: string): OutgoingRecord {
  const { topic, partition, offset, key, value } = record;
  const letter: DeadLetter = { reason, topic, partition, offset, key, value };
  return { key: key ?? topic, value: JSON.stringify(letter) };
}
