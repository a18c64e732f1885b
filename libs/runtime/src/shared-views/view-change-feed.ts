import { TOPICS } from '@rsd/contracts';
import type { Logger } from '@rsd/platform';
import { type EventLog, type Subscription } from '@rsd/ports';
import { parseRecord } from '@rsd/consumers';
import type { CachedViewStore } from './cached-view-store';

export interface ChangeFeedDeps {
  eventLog: EventLog;
  /** The replica's cached views: the feed feeds their overlay. */
  views: CachedViewStore;
  log: Logger;
  /** Names this replica's consumer group (deleted when the feed closes): replicas sharing a host need distinct ids. */
  replicaId: string;
}

/**
 * Every read-API replica follows the topics itself, in a consumer group of its own, from the
 * moment it starts: the shared projection may lag, but a revocation reaches each replica's cache
 * as fast as Kafka delivers it. Invalid records are skipped here; the shared projection
 * dead-letters them.
 */
export function startChangeFeed({ eventLog, views, log, replicaId }: ChangeFeedDeps): Promise<Subscription> {
  return eventLog.subscribe({
    groupId: `read-api-feed-${replicaId}`,
    ephemeral: true,
    topics: [TOPICS.authorizations, TOPICS.scores],
    fromBeginning: false,
    trackFreshness: true,
    handle: (record) => {
      const parsed = parseRecord(record);
      if ('reason' in parsed) log.debug({ topic: record.topic, offset: record.offset }, 'change feed skipped an invalid record');
      // An erased organization's event (decision 56) is passed by: nothing of it is kept.
      else if ('event' in parsed) views.observe(parsed.event);
      return Promise.resolve();
    },
  });
}
