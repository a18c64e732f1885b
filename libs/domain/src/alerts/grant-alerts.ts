import { ALERT_RULES, type AccessRecord, type Alert, type AlertType } from '@rsd/contracts';
import { statusOf, type StoredAuthorization } from '../authorizations/authorization-record';
import { activityOf, type GrantActivity, type StoredAlert } from './alert-state';
import { authorizationAlerted } from '../authorizations/authorization-events';
import { generateClientId } from '../credential-formats';
import type { AuthorizationAlerted } from '@rsd/contracts';

/*
 * Decision 44, decided without I/O: what a grant's reads and the clock mean to its organization. What a
 * grant remembers for it is its alert state (alert-state.ts), which these functions read and return.
 */

/** A grant is read from few addresses; beyond this many, the least recently seen is forgotten (and would be new again). */
export const ADDRESSES_KEPT = 50;
/** At most the console's list: an organization's last 100 alerts are among its grants' last 100 each. */
export const ALERTS_KEPT = ALERT_RULES.alertsListed;
/** An address seen again is written down again only this long after it was, so steady reads cost no write. */
const ADDRESS_REFRESH_MS = 60 * 60_000;
const DAY_MS = 86_400_000;

/** An alert found, before it has an id: the caller names it and stores it with its event. */
export type NewAlert = Omit<StoredAlert, 'id'>;

export interface Observed {
  activity: GrantActivity;
  alerts: NewAlert[];
}

/**
 * The grant's own access records (any order), read against what the grant remembers. Undefined when
 * nothing needs writing: the usual case for a grant read steadily from the addresses it always uses.
 * An ended grant raises nothing. Claims (decision 38) are not reads.
 *
 * - `authorization.first_use`: the first successful read, with its address; that read's address is
 *   not also reported as new.
 * - `authorization.new_address`: a successful read from an address not seen in the previous 30 days.
 * - `authorization.auth_failures`: the 20th failed authentication (401 `INVALID_API_KEY` or
 *   `MISSING_API_KEY`) within 5 minutes, at most once an hour.
 */
export function observeAccess(record: StoredAuthorization, records: readonly AccessRecord[], now: Date): Observed | undefined {
  if (statusOf(record, now) !== 'active') return undefined;
  const before = activityOf(record);
  const activity: GrantActivity = { ...before, failures: [...before.failures] };
  const seen = new Map(before.addresses.map(({ address, seenAt }) => [address, seenAt]));
  const alerts: NewAlert[] = [];
  let changed = false;
  const inOrder = [...records].sort((a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id));
  for (const access of inOrder) {
    if (access.resource === 'claim') continue;
    const at = Date.parse(access.at);
    if (access.status < 400) {
      const address = access.clientAddress ?? undefined;
      const firstUse = activity.firstUsedAt === null;
      if (firstUse) {
        activity.firstUsedAt = access.at;
        alerts.push({ type: 'authorization.first_use', at: access.at, ...(address ? { address } : {}) });
        changed = true;
      }
      if (!address) continue;
      const lastSeen = seen.get(address);
      const lastSeenAt = lastSeen === undefined ? undefined : Date.parse(lastSeen);
      if (lastSeenAt !== undefined && at <= lastSeenAt) continue;
      if (!firstUse && (lastSeenAt === undefined || at - lastSeenAt > ALERT_RULES.newAddressDays * DAY_MS)) {
        alerts.push({ type: 'authorization.new_address', at: access.at, address });
      }
      if (lastSeenAt === undefined || at - lastSeenAt >= ADDRESS_REFRESH_MS) {
        seen.set(address, access.at);
        changed = true;
      }
    } else if (isFailedAuthentication(access)) {
      const alertedAt = activity.failuresAlertedAt === null ? undefined : Date.parse(activity.failuresAlertedAt);
      // Within the hour after an alert nothing more can be raised: counting starts again after it.
      if (alertedAt !== undefined && at - alertedAt < ALERT_RULES.failureAlertEveryMinutes * 60_000) continue;
      // A batch delivered again (after a crash) adds nothing.
      const entry = failureEntry(access);
      if (activity.failures.includes(entry)) continue;
      activity.failures = [...activity.failures, entry].sort().slice(-ALERT_RULES.failureThreshold);
      changed = true;
      // Counted back from the newest failure known, not from this one: each read-API replica publishes
      // its own batches, so a failure can arrive after later ones, and counting up to it alone would
      // leave the newer ones out and never reach the threshold.
      const newest = failureTime(activity.failures[activity.failures.length - 1]!);
      const windowStart = Date.parse(newest) - ALERT_RULES.failureWindowMinutes * 60_000;
      const recent = activity.failures.filter((failure) => Date.parse(failureTime(failure)) >= windowStart).length;
      if (recent >= ALERT_RULES.failureThreshold) {
        alerts.push({ type: 'authorization.auth_failures', at: newest, failures: recent });
        activity.failuresAlertedAt = newest;
        activity.failures = [];
      }
    }
  }
  if (!changed && alerts.length === 0) return undefined;
  activity.addresses = [...seen]
    .map(([address, seenAt]) => ({ address, seenAt }))
    .sort((a, b) => b.seenAt.localeCompare(a.seenAt) || a.address.localeCompare(b.address))
    .slice(0, ADDRESSES_KEPT);
  return { activity, alerts };
}

/** A failure as `failures` keeps it: its time first, so that entries sort by time. */
function failureEntry(access: AccessRecord): string {
  return `${access.at} ${access.id}`;
}

function failureTime(entry: string): string {
  return entry.split(' ', 1)[0]!;
}

function isFailedAuthentication(access: AccessRecord): boolean {
  return access.status === 401 && (access.code === 'INVALID_API_KEY' || access.code === 'MISSING_API_KEY');
}

/**
 * `authorization.expiring`, 7 days and 1 day before `expiresAt`: the notice due at `now`, if any. A
 * grant that reaches both marks before a check (made with 2 days left, or found late) gets only the
 * nearer one; both are then marked sent.
 */
export function expiryNoticeDue(record: StoredAuthorization, now: Date): { activity: GrantActivity; alert: NewAlert } | undefined {
  if (record.expiresAt === null || statusOf(record, now) !== 'active') return undefined;
  const activity = activityOf(record);
  const expiresAt = Date.parse(record.expiresAt);
  const reached = ALERT_RULES.expiryNoticeDays.filter(
    (days) => !activity.expiryNotices.includes(days) && now.getTime() >= expiresAt - days * DAY_MS,
  );
  if (reached.length === 0) return undefined;
  return {
    activity: { ...activity, expiryNotices: [...activity.expiryNotices, ...reached].sort((a, b) => b - a) },
    alert: { type: 'authorization.expiring', at: now.toISOString(), expiresAt: record.expiresAt },
  };
}

/** When the next expiry notice falls due (an index of the stores), or null: no expiry, none left, or ended. */
export function nextExpiryNoticeAt(record: StoredAuthorization): string | null {
  if (record.expiresAt === null || record.revokedAt !== null || record.expiredAt !== null) return null;
  const sent = activityOf(record).expiryNotices;
  const expiresAt = Date.parse(record.expiresAt);
  const due = ALERT_RULES.expiryNoticeDays.filter((days) => !sent.includes(days)).map((days) => expiresAt - days * DAY_MS);
  return due.length === 0 ? null : new Date(Math.min(...due)).toISOString();
}

/** The record with new alerts kept (newest first, at most `ALERTS_KEPT`). */
export function withAlerts(record: StoredAuthorization, alerts: readonly StoredAlert[]): StoredAlert[] {
  return [...[...alerts].reverse(), ...(record.alerts ?? [])].slice(0, ALERTS_KEPT);
}

/** Decision 44 for revocations: a key reported leaked, or a grant released from a portfolio, is an alert too. */
export function revocationAlertType(record: StoredAuthorization): AlertType | undefined {
  if (!record.revokedAt) return undefined;
  if (record.revocationReason === 'key_leaked') return 'authorization.key_leaked';
  if (record.revocationReason === 'released_by_recipient') return 'authorization.released';
  return undefined;
}

/**
 * An organization's last alerts across its grants, newest first: each grant's kept alerts, and the
 * revocations that are alerts (their reason is on the record).
 */
export function organizationAlerts(records: readonly StoredAuthorization[], limit: number = ALERT_RULES.alertsListed): Alert[] {
  const all: Alert[] = [];
  for (const record of records) {
    for (const alert of record.alerts ?? []) all.push({ ...alert, clientId: record.clientId });
    const revoked = revocationAlertType(record);
    if (revoked && record.revokedAt)
      all.push({ id: `revoked-${record.clientId}`, type: revoked, at: record.revokedAt, clientId: record.clientId });
  }
  return all.sort((a, b) => b.at.localeCompare(a.at) || a.id.localeCompare(b.id)).slice(0, limit);
}

/**
 * The record's next revision with what was observed: the new activity, the alerts kept, and an
 * `AuthorizationAlerted` event per alert for the outbox, written together.
 */
export function decideAlerts(
  record: StoredAuthorization,
  observed: { activity: GrantActivity; alerts: readonly NewAlert[] },
  newEventId: () => string,
): { record: StoredAuthorization; events: AuthorizationAlerted[] } {
  const alerts: StoredAlert[] = observed.alerts.map((alert) => ({ id: generateClientId('alr'), ...alert }));
  const next: StoredAuthorization = {
    ...record,
    activity: observed.activity,
    alerts: withAlerts(record, alerts),
    revision: record.revision + 1,
  };
  const events = alerts.map((alert) => authorizationAlerted(next, alert, { id: newEventId(), time: new Date(alert.at) }));
  return { record: next, events };
}
