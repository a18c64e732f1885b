import type { AuditRecord } from '@rsd/contracts';

/** Where a page ends: the last entry's instant and event id (an event is kept once, so the pair is unique). */
export interface AuditPosition {
  at: string;
  eventId: string;
}

/** Decision 54's filters; every one given must hold. Instants are UTC ISO strings as the entries' `at`. */
export interface AuditFilter {
  organizationId: string;
  /** At or after. */
  from?: string;
  /** Strictly before. */
  to?: string;
  /** The actor's id, or one of the actor types (`person`, `service`, `recipient`, `system`, `reporter`). */
  actor?: string;
  action?: string;
  clientId?: string;
}

/**
 * The audit trail's view (decision 54), kept current from the event log by the credentials service:
 * SQLite in the embedded database, MongoDB on the distributed runtime.
 */
export interface AuditLogStore {
  /** Keeps the entries; an entry whose event id is kept already is left as it is (the log may deliver an event again). */
  add(records: readonly AuditRecord[]): Promise<void>;
  /** The organization's entries that match, newest first (by `at`, then event id, descending), strictly beyond `after`. */
  page(filter: AuditFilter, options: { limit: number; after?: AuditPosition }): Promise<AuditRecord[]>;
  /** Decision 56: forgets every entry of the organization (its offboarding). Idempotent. */
  purgeOrganization(organizationId: string): Promise<void>;
  /**
   * Decision 56: a recipient's erasure: the entries of the organization that concern this Client ID
   * keep their action and time but lose the address and request they came from. Idempotent.
   */
  eraseAddresses(organizationId: string, clientId: string): Promise<void>;
  /** Decision 56's retention (AUDIT_RETENTION_DAYS): forgets every entry whose `at` is before `before`, of every organization. */
  prune(before: Date): Promise<void>;
  close(): Promise<void>;
}
