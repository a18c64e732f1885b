import type { StoredAuthorization } from '@rsd/domain';

/** An event the record still owes the event log (transactional outbox). */
export interface OutboxEntry {
  id: string;
  topic: string;
  key: string;
  value: string;
}

export interface PendingOutbox {
  clientId: string;
  entries: OutboxEntry[];
}

/**
 * Records and the events they owe are written together in one write, so an event is never lost
 * and never emitted for a change that was not stored.
 */
export interface AuthorizationStore {
  create(record: StoredAuthorization, outbox: readonly OutboxEntry[]): Promise<void>;
  /** Writes only if the stored revision is still `expectedRevision`; false means someone else changed it first. */
  update(record: StoredAuthorization, expectedRevision: number, outbox: readonly OutboxEntry[]): Promise<boolean>;
  find(organizationId: string, clientId: string): Promise<StoredAuthorization | undefined>;
  /** Newest first. */
  list(organizationId: string): Promise<StoredAuthorization[]>;
  /**
   * Decision 38: the authorization whose current claim link has this token digest (a spent one
   * included: it stays until a new link replaces it), through an index; undefined when none has.
   */
  findByClaimToken(tokenDigest: string): Promise<StoredAuthorization | undefined>;
  /** Authorizations neither revoked nor marked expired whose `expiresAt` is at or before `now`. */
  findDueForExpiry(now: Date, limit: number): Promise<StoredAuthorization[]>;
  pendingOutbox(limit: number): Promise<PendingOutbox[]>;
  markPublished(clientId: string, entryIds: readonly string[]): Promise<void>;
  close(): Promise<void>;
}
