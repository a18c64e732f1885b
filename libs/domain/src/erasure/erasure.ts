import { EVENT_TYPES, PURGING_SERVICES, type Offboarding, type PurgingService } from '@rsd/contracts';
import type { StoredAuthorization } from '../authorizations/authorization-record';
import { consumeEvents, type EventConsumers } from '../views/view';

/*
 * Decision 56's rules, pure: whose key protects what, what a recipient's erasure leaves of a grant, and
 * when an organization's offboarding is done.
 */

/** The subject of everything of one organization. */
export function organizationSubject(organizationId: string): string {
  return `organization:${organizationId}`;
}

/**
 * The subject of a recipient's data on one grant (the name the organization gave it, the addresses its
 * alerts saw): the grant's own, whoever holds it. An organization erases what is its grant's, never the
 * account's, which holds other organizations' grants.
 */
export function grantSubject(clientId: string): string {
  return `grant:${clientId}`;
}

/** A recipient account's own subject (its name, its own changes). */
export function accountSubject(accountId: string): string {
  return `account:${accountId}`;
}

/**
 * The grant after its recipient's erasure: no name, no address it was claimed or read from, no
 * address in its alerts; its scopes, times, keys' digests and history stay. Nothing else changes.
 */
export function withoutRecipientData(record: StoredAuthorization): StoredAuthorization {
  const erased: StoredAuthorization = { ...record, recipientName: null };
  if (record.claimedFromAddress != null) erased.claimedFromAddress = null;
  if (record.recipientAccountName != null) erased.recipientAccountName = null;
  if (record.activity) erased.activity = { ...record.activity, addresses: [] };
  if (record.alerts) erased.alerts = record.alerts.map(({ address: _address, ...alert }) => alert);
  return erased;
}

/**
 * The events on which every service purges an organization (decision 56's offboarding), each with the
 * organization it purges; views need not name them (a purge removes documents, no state evolves).
 */
export const PURGES_BY_EVENT = {
  [EVENT_TYPES.organizationOffboarded]: (event) => event.data.organizationId,
} satisfies Partial<EventConsumers<[], string>>;

/** The organization an event has every service purge, or undefined. */
export const organizationPurgedBy = consumeEvents<[], string | undefined>(PURGES_BY_EVENT, undefined);

/** How long the record of an offboarding is kept once it is done. */
export const OFFBOARDING_RECORD_DAYS = 30;

/** An offboarding as the credentials service keeps it: when it began, which services have purged, when the last did. */
export interface OffboardingRecord {
  organizationId: string;
  startedAt: string;
  /** Each service's purge, by service; absent until it has purged. */
  purgedBy: Partial<Record<PurgingService, string>>;
  /** When every service had purged; null while pending. */
  doneAt: string | null;
  /** When the record itself is forgotten (`OFFBOARDING_RECORD_DAYS` after `doneAt`); null while pending. */
  expiresAt: string | null;
}

export function startedOffboarding(organizationId: string, startedAt: Date): OffboardingRecord {
  return { organizationId, startedAt: startedAt.toISOString(), purgedBy: {}, doneAt: null, expiresAt: null };
}

/**
 * The record once `service` has purged at `at`: done, and set to expire, when it was the last one.
 * A purge told again (a record delivered twice, a replayed log) keeps the first instant and changes nothing.
 */
export function withPurge(record: OffboardingRecord, service: PurgingService, at: Date): OffboardingRecord {
  if (record.purgedBy[service] !== undefined) return record;
  const purgedBy = { ...record.purgedBy, [service]: at.toISOString() };
  const done = record.doneAt === null && PURGING_SERVICES.every((each) => purgedBy[each] !== undefined);
  if (!done) return { ...record, purgedBy };
  return {
    ...record,
    purgedBy,
    doneAt: at.toISOString(),
    expiresAt: new Date(at.getTime() + OFFBOARDING_RECORD_DAYS * 86_400_000).toISOString(),
  };
}

/** Whether the record is still answered at `now`. */
export function offboardingKept(record: OffboardingRecord, now: Date): boolean {
  return record.expiresAt === null || Date.parse(record.expiresAt) > now.getTime();
}

export function offboardingOf(record: OffboardingRecord): Offboarding {
  return { status: record.doneAt === null ? 'pending' : 'done', startedAt: record.startedAt, doneAt: record.doneAt };
}
