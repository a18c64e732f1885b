import { randomUUID } from 'node:crypto';
import { EVENT_TYPES, jsonObjectOf, TOPICS } from '@rsd/contracts';
import { grantSubject, organizationSubject } from '@rsd/domain';
import type { EventLog, SubjectId, SubjectKeyStore } from '@rsd/ports';

/** Every subject the log says was erased, with the instant of its erasure's event. */
export type ErasuresInLog = Map<SubjectId, string>;

/**
 * Decision 56: the destructions the event log records, read from its erasure events, which are
 * appended in clear: `recipient.erased` names its subject; `organization.offboarded` destroyed the
 * organization's key and the key of each of its grants (`grant:<clientId>`) that the log knew before
 * the offboarding's event (a grant of the same id made later is not the offboarding's). Read from the
 * authorizations topic's beginning in a consumer group used once, without opening any sealed value.
 */
export async function erasuresInLog(eventLog: EventLog): Promise<ErasuresInLog> {
  const erased: ErasuresInLog = new Map();
  const offboarded = new Map<string, string>();
  // Each grant's organization and the instant of its first event.
  const grants = new Map<string, { organizationId: string; since: string }>();
  const subscription = await eventLog.subscribe({
    groupId: `subject-keys-erasures-${randomUUID()}`,
    topics: [TOPICS.authorizations],
    fromBeginning: true,
    ephemeral: true,
    awaitedOn: [],
    handle: (record) => {
      const event = clearPartOf(record.value);
      if (!event) return Promise.resolve();
      const { type, time, data } = event;
      if (type === EVENT_TYPES.recipientErased && typeof data.subject === 'string') keepFirst(erased, data.subject, time);
      else if (type === EVENT_TYPES.organizationOffboarded && typeof data.organizationId === 'string') {
        keepFirst(offboarded, data.organizationId, time);
      } else if (typeof data.organizationId === 'string' && typeof data.clientId === 'string') {
        const known = grants.get(data.clientId);
        if (!known || time < known.since) grants.set(data.clientId, { organizationId: data.organizationId, since: time });
      }
      return Promise.resolve();
    },
  });
  try {
    await subscription.caughtUp;
  } finally {
    await subscription.close();
  }
  for (const [organizationId, at] of offboarded) keepFirst(erased, organizationSubject(organizationId), at);
  for (const [clientId, grant] of grants) {
    const at = offboarded.get(grant.organizationId);
    if (at !== undefined && grant.since <= at) keepFirst(erased, grantSubject(clientId), at);
  }
  return erased;
}

/**
 * Destroys, in `store`, every subject of `erasures` it does not hold destroyed yet (a key put back by
 * a restore, or written over meanwhile): answers how many it destroyed. A destruction keeps its first
 * instant, so one already there is left as it is.
 */
export async function reapplyErasures(store: Pick<SubjectKeyStore, 'read' | 'destroy'>, erasures: ErasuresInLog): Promise<number> {
  let destroyed = 0;
  for (const [subject, at] of erasures) {
    if ((await store.read(subject))?.state === 'destroyed') continue;
    await store.destroy(subject, at);
    destroyed += 1;
  }
  return destroyed;
}

/** The clear envelope of an event as written (its sealed parts are not opened): its type, time and clear data. */
function clearPartOf(value: string): { type: string; time: string; data: Record<string, unknown> } | undefined {
  const json = jsonObjectOf(value);
  if (!json) return undefined;
  const { type, time, data } = json;
  if (typeof type !== 'string' || typeof time !== 'string' || typeof data !== 'object' || data === null) return undefined;
  return { type, time, data: data as Record<string, unknown> };
}

function keepFirst<K>(map: Map<K, string>, key: K, at: string): void {
  const known = map.get(key);
  if (known === undefined || at < known) map.set(key, at);
}
