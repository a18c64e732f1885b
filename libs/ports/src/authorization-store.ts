import type { AuthorizationStatus, RecipientType, Scope } from '@rsd/contracts';

/** The credentials service's own record of an authorization. Holds a digest of the key, never the key. */
export interface StoredAuthorization {
  clientId: string;
  organizationId: string;
  recipientType: RecipientType;
  recipientName: string | null;
  scopes: Scope[];
  keyDigest: string;
  expiresAt: string | null;
  createdAt: string;
  revokedAt: string | null;
  expiredAt: string | null;
  /** Bumped by every change; also the revision of the event that change emits. */
  revision: number;
}

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
  /** Authorizations neither revoked nor marked expired whose `expiresAt` is at or before `now`. */
  findDueForExpiry(now: Date, limit: number): Promise<StoredAuthorization[]>;
  pendingOutbox(limit: number): Promise<PendingOutbox[]>;
  markPublished(clientId: string, entryIds: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

export function statusOf(record: StoredAuthorization, now: Date): AuthorizationStatus {
  if (record.revokedAt) return 'revoked';
  if (record.expiredAt) return 'expired';
  if (record.expiresAt && now.getTime() >= Date.parse(record.expiresAt)) return 'expired';
  return 'active';
}
