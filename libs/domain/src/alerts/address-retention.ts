import { ALERT_RULES } from '@rsd/contracts';
import type { StoredAuthorization } from '../authorizations/authorization-record';

/*
 * Decision 56's retention of the addresses a grant's alerts keep (ALERT_ADDRESS_RETENTION_DAYS, 90 by
 * default): the addresses it was read from (`activity.addresses`) and the address of each of its alerts.
 */

/** The shortest retention allowed: an address forgotten sooner would make decision 44's `new_address` rule raise alerts it would not have. */
export const MIN_ALERT_ADDRESS_RETENTION_DAYS = ALERT_RULES.newAddressDays;

/**
 * The grant's next revision without what it keeps of addresses from before `before`, or undefined when
 * it keeps none. A seen address is nothing but the address and when it was last seen, so it goes; an
 * alert is the organization's history (its type and time stay listed) and loses only its address. An
 * address not seen for longer than `newAddressDays` is new when seen again, kept or not, so the alerts
 * raised later are the same.
 */
/** Whether the grant keeps a seen address, or an alert's address, from before `before` (what `withoutAlertAddressesBefore` erases). */
export function keepsAlertAddressesBefore(record: StoredAuthorization, before: Date): boolean {
  return withoutAlertAddressesBefore(record, before) !== undefined;
}

export function withoutAlertAddressesBefore(record: StoredAuthorization, before: Date): StoredAuthorization | undefined {
  const cutOff = before.getTime();
  const old = (at: string) => Date.parse(at) < cutOff;
  const addresses = record.activity?.addresses ?? [];
  const alerts = record.alerts ?? [];
  const staleAddresses = addresses.some(({ seenAt }) => old(seenAt));
  const staleAlerts = alerts.some((alert) => alert.address !== undefined && old(alert.at));
  if (!staleAddresses && !staleAlerts) return undefined;
  const next: StoredAuthorization = { ...record, revision: record.revision + 1 };
  if (record.activity && staleAddresses) next.activity = { ...record.activity, addresses: addresses.filter(({ seenAt }) => !old(seenAt)) };
  if (staleAlerts) {
    next.alerts = alerts.map((alert) => {
      if (alert.address === undefined || !old(alert.at)) return alert;
      const { address: _address, ...kept } = alert;
      return kept;
    });
  }
  return next;
}
