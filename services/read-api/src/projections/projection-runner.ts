import { TOPICS } from '@rsd/contracts';
import { READ_VIEWS } from '@rsd/domain';
import type { Logger } from '@rsd/platform';
import { parseRecord, projectEvent, type EventLog, type EventRecord, type Subscription, type ViewStore } from '@rsd/ports';

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
  return eventLog.subscribe({
    groupId,
    topics: [TOPICS.authorizations, TOPICS.scores],
    fromBeginning: true,
    ephemeral,
    handle: async (record) => {
      const parsed = parseRecord(record);
      if ('reason' in parsed) {
        if (!deadLetters) return;
        await deadLetter(eventLog, record, parsed.reason);
        log.warn({ topic: record.topic, partition: record.partition, offset: record.offset, reason: parsed.reason }, 'event dead-lettered');
        onDeadLetter?.(record.topic);
        return;
      }
      try {
        await projectEvent(views, READ_VIEWS, parsed.event);
      } catch (error) {
        onProjectionError?.();
        throw error;
      }
    },
  });
}

async function deadLetter(eventLog: EventLog, record: EventRecord, reason: string): Promise<void> {
  const { topic, partition, offset, key, value } = record;
  const letter: DeadLetter = { reason, topic, partition, offset, key, value };
  // Keyed like the original, so one key's dead letters keep their order.
  await eventLog.append(TOPICS.deadLetter, [{ key: key ?? topic, value: JSON.stringify(letter) }]);
}
