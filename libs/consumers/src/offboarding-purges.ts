import { organizationPurgedBy } from '@rsd/domain';
import {
  ORGANIZATION_PURGED_TYPE,
  organizationPurgedSchema,
  PURGES_TOPIC,
  type DomainEvent,
  type OrganizationPurged,
  type PurgingService,
} from '@rsd/contracts';
import type { EventLog, EventRecord, OutgoingRecord } from '@rsd/ports';

export interface OffboardingPurgeDeps {
  eventLog: Pick<EventLog, 'append'>;
  service: PurgingService;
  /** Forgets everything the service keeps of the organization; idempotent (a replayed event purges again). */
  purge(organizationId: string): Promise<void>;
  now(): Date;
}

/**
 * Decision 56: for each `organization.offboarded` among `events`, in order, the service's purge, then
 * its word that it purged on PURGES_TOPIC, which the credentials service follows to know when the
 * offboarding is done. Called after the events were otherwise handled, so whatever they wrote of the
 * organization is purged too. A failed purge throws, and the log hands the events over again.
 */
export async function purgeOffboarded(events: readonly DomainEvent[], deps: OffboardingPurgeDeps): Promise<void> {
  for (const event of events) {
    const organizationId = organizationPurgedBy(event);
    if (organizationId === undefined) continue;
    await deps.purge(organizationId);
    await deps.eventLog.append(PURGES_TOPIC, [purgedRecord({ organizationId, service: deps.service, purgedAt: deps.now() })]);
  }
}

/** A service's word that it purged the organization, keyed by the organization. */
export function purgedRecord(purge: { organizationId: string; service: PurgingService; purgedAt: Date }): OutgoingRecord {
  const value: OrganizationPurged = {
    type: ORGANIZATION_PURGED_TYPE,
    organizationId: purge.organizationId,
    service: purge.service,
    purgedAt: purge.purgedAt.toISOString(),
  };
  return { key: purge.organizationId, value: JSON.stringify(value) };
}

/** A record of PURGES_TOPIC as a purge, or undefined when it is none (anyone with access to the topic can write to it). */
export function purgeOf(record: EventRecord): OrganizationPurged | undefined {
  try {
    const parsed = organizationPurgedSchema.safeParse(JSON.parse(record.value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
