import type { Alert } from '@rsd/contracts';

/**
 * Decision 44: what a grant remembers for its alerts, apart from the grant itself. The authorization
 * record carries it (one document, written with the grant's revision and its events, so an alert and
 * its outbox event are stored together), but it is defined here and read only by the alert rules
 * (grant-alerts.ts): the grant's own rules never look at it, and this module imports nothing of theirs.
 * Both parts are bounded.
 */
export interface GrantAlertState {
  /** What the grant's reads left to remember for its alerts; absent before any. */
  activity?: GrantActivity;
  /** The grant's last alerts, newest first (at most `ALERTS_KEPT`), which the console lists. */
  alerts?: StoredAlert[];
}

export interface GrantActivity {
  /** The first successful read; null until there is one. */
  firstUsedAt: string | null;
  /**
   * The addresses read from, each with the last successful read from it that was written down (at most
   * `ADDRESSES_KEPT`, the most recent). A list, not an object keyed by address: MongoDB refuses keys with dots.
   */
  addresses: SeenAddress[];
  /**
   * The last failed authentications, oldest first (at most `failureThreshold`), each its time and its
   * access record's id (`failureEntry`): two failures in one millisecond are two, a record delivered
   * again is one. An entry kept before ids were is its time alone, and still reads as one.
   */
  failures: string[];
  /** When `authorization.auth_failures` was last raised. */
  failuresAlertedAt: string | null;
  /** The `expiryNoticeDays` already sent (or passed) for the current `expiresAt`. */
  expiryNotices: number[];
}

export interface SeenAddress {
  address: string;
  seenAt: string;
}

/** An alert as the grant keeps it: the console's entry without the Client ID, which is the grant's. */
export type StoredAlert = Omit<Alert, 'clientId'>;

export const NO_ACTIVITY: GrantActivity = { firstUsedAt: null, addresses: [], failures: [], failuresAlertedAt: null, expiryNotices: [] };

export function activityOf(state: GrantAlertState): GrantActivity {
  return state.activity ?? NO_ACTIVITY;
}
