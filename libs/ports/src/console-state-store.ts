/** What the console keeps between requests (decision 31): sign-in attempts, one-time links and sessions. */
export type ConsoleStateKind = 'attempt' | 'link' | 'session';

export interface ConsoleStateRecord {
  /** Plain strings only: an identity, or an attempt's state, nonce and PKCE verifier. */
  value: Record<string, string>;
  /** Epoch milliseconds. */
  createdAt: number;
  lastSeenAt: number;
  /** From this instant the record is gone: never returned, and removed by the store in its own time. */
  expiresAt: number;
}

/**
 * Keyed by a digest of the secret the browser holds, never the secret: a copy of the store signs
 * nobody in. Shared by every replica of the credentials service (a sign-in that starts on one may
 * finish on another), and bounded: expired records are removed by the store.
 */
export interface ConsoleStateStore {
  put(kind: ConsoleStateKind, key: string, record: ConsoleStateRecord): Promise<void>;
  /** The record if it has not expired at `now`. */
  get(kind: ConsoleStateKind, key: string, now: number): Promise<ConsoleStateRecord | undefined>;
  /** The record, removed in the same step: of two concurrent takes, one gets it (a link or an attempt works once). */
  take(kind: ConsoleStateKind, key: string, now: number): Promise<ConsoleStateRecord | undefined>;
  /** A session's use: when it was last seen, and its new end. No-op for a record that is gone. */
  touch(kind: ConsoleStateKind, key: string, lastSeenAt: number, expiresAt: number): Promise<void>;
  delete(kind: ConsoleStateKind, key: string): Promise<void>;
  close(): Promise<void>;
}
