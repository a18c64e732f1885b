import { PURGES_TOPIC, TOPICS, type DomainEvent } from '@rsd/contracts';
import { parseRecord, purgeOf, purgeOffboarded } from '@rsd/consumers';
import type { Logger } from '@rsd/platform';
import type { AccessLogStore, AuditLogStore, AuthorizationStore, Clock, EventLog, EventRecord, OffboardingStore } from '@rsd/ports';

/** What the erasure feed follows: the authorizations' topic (offboardings) and every service's word of its purge. */
export const ERASURE_TOPICS = [TOPICS.authorizations, PURGES_TOPIC];

export interface ErasureFeedDeps {
  eventLog: Pick<EventLog, 'append'>;
  store: Pick<AuthorizationStore, 'list' | 'purgeOrganization'>;
  accessLog: Pick<AccessLogStore, 'purgeClients'>;
  auditLog: Pick<AuditLogStore, 'purgeOrganization'>;
  offboardings: Pick<OffboardingStore, 'recordPurge'>;
  clock: Clock;
  log: Logger;
}

/**
 * Decision 56, the credentials service's part: on `organization.offboarded` it purges what it keeps
 * (the grants' access log and usage, the audit entries, then the grants and reviews) and says so on
 * PURGES_TOPIC like every service; each service's word, its own included, goes into the offboarding's
 * record, which is done once every service has purged. Why words on a topic rather than watching the
 * other services' positions: a position says a record was read, not that its purge held, and the
 * services keep their stores apart, so only each service can say it purged.
 */
export function erasureFeed(deps: ErasureFeedDeps): { handle(record: EventRecord): Promise<void> } {
  const { store, accessLog, auditLog, offboardings, clock, log } = deps;
  return {
    handle: async (record) => {
      if (record.topic === PURGES_TOPIC) {
        const purge = purgeOf(record);
        if (!purge) {
          log.warn(
            { topic: record.topic, partition: record.partition, offset: record.offset },
            'erasure feed skipped a record that is no purge',
          );
          return;
        }
        const offboarding = await offboardings.recordPurge(purge.organizationId, purge.service, new Date(purge.purgedAt));
        if (offboarding?.doneAt === purge.purgedAt)
          log.info({ organizationId: purge.organizationId }, 'organization offboarded: every service has purged it');
        return;
      }
      const parsed = parseRecord(record);
      // The read API dead-letters what cannot be used; this feed only passes it by.
      if (!('event' in parsed)) return;
      const events: DomainEvent[] = [parsed.event];
      await purgeOffboarded(events, {
        eventLog: deps.eventLog,
        service: 'credentials',
        purge: async (organizationId) => {
          // The grants go last: until then they name the Client IDs whose access log goes, should a step fail and come again.
          const grants = await store.list(organizationId);
          await accessLog.purgeClients(grants.map((grant) => grant.clientId));
          await auditLog.purgeOrganization(organizationId);
          await store.purgeOrganization(organizationId);
        },
        now: () => clock.now(),
      });
    },
  };
}
