import type { GrantAlertState } from '../alerts/alert-state';
import type { AuthorizationStatus, RecipientType, RevocationReason, Scope } from '@rsd/contracts';
import { hasExpired } from '../expiry';

/**
 * The credentials service's own record of an authorization. Holds a digest of the key, never the key.
 * It also carries the grant's alert state (`activity`, `alerts`: alerts/alert-state.ts), stored with it
 * but read only by the alert rules.
 */
export interface StoredAuthorization extends GrantAlertState {
  clientId: string;
  organizationId: string;
  recipientType: RecipientType;
  recipientName: string | null;
  scopes: Scope[];
  /** Null while a key delivered by claim link waits to be claimed (decision 38): no key exists, every key is refused. */
  keyDigest: string | null;
  /** Decision 19: the key the last rotation replaced, valid until `previousKeyExpiresAt` (records from before rotation lack both). */
  previousKeyDigest?: string | null;
  previousKeyExpiresAt?: string | null;
  /**
   * Decision 43: the digest of the last previous key a leak report ended, kept so that the same report
   * again is still labelled a true positive and finds the record by the key store's index. A leaked
   * current key revokes the authorization and stays its `keyDigest`. Absent or null: none.
   */
  leakedKeyDigest?: string | null;
  /** Decision 22: reads only from these addresses or ranges; null or absent: from anywhere. */
  allowedCidrs?: string[] | null;
  expiresAt: string | null;
  /**
   * Decision 38: the digest of the current claim link's token, kept after its use so that a second
   * use is told apart from an unknown link; replaced by a new link. Absent or null: the key was
   * delivered in the response.
   */
  claimTokenDigest?: string | null;
  /** The first instant the current claim link no longer works. */
  claimExpiresAt?: string | null;
  claimedAt?: string | null;
  claimedFromAddress?: string | null;
  /**
   * Decision 42: the recipient account that holds the grant, by a direct grant or a claim into it;
   * such a grant has no key of its own. The account's name is kept with it (names never change), so
   * a list shows it without a lookup per record. Absent or null: the grant has its own key.
   */
  recipientAccountId?: string | null;
  recipientAccountName?: string | null;
  /**
   * The recipient account the organization offered the grant to (`keyDelivery: "account"`). The account
   * holds it (`recipientAccountId`) only once it accepts, by its key or by trusting the organization
   * beforehand; until then nothing reads the grant. Absent or null: not offered.
   */
  offeredAccountId?: string | null;
  createdAt: string;
  revokedAt: string | null;
  /** Why it was revoked; absent on records from before decision 42 (then: by the organization). */
  revocationReason?: RevocationReason | null;
  expiredAt: string | null;
  /** Bumped by every change; also the revision of the event that change emits. */
  revision: number;
}

export function statusOf(record: StoredAuthorization, now: Date): AuthorizationStatus {
  if (record.revokedAt) return 'revoked';
  if (record.expiredAt || hasExpired(record.expiresAt, now)) return 'expired';
  if (awaitsAcceptance(record)) return 'pending';
  return 'active';
}

/** Offered to a recipient account that has not accepted it (whether or not it has ended since). */
export function awaitsAcceptance(record: StoredAuthorization): boolean {
  return record.offeredAccountId != null && !heldByAccount(record);
}

/**
 * The account whose answer an offer waits for, as the stores index it: none once the offer is accepted,
 * revoked or marked expired (one past its `expiresAt` but not yet marked stays until the mark; readers
 * check the time).
 */
export function offerAwaitingAccountOf(record: StoredAuthorization): string | null {
  return awaitsAcceptance(record) && !record.revokedAt && !record.expiredAt ? (record.offeredAccountId ?? null) : null;
}

/**
 * Decision 38: false while a key delivered by claim link waits to be claimed, and likewise while a grant
 * offered to an account waits for its acceptance (a grant held by an account has been taken).
 */
export function keyClaimed(record: StoredAuthorization): boolean {
  return record.keyDigest !== null || heldByAccount(record);
}

/** Decision 42: the grant is read with a recipient account's key, not a key of its own. */
export function heldByAccount(record: StoredAuthorization): boolean {
  return record.recipientAccountId != null;
}

/** Decision 42: a revoked record's reason; records revoked before reasons existed were revoked by their organization. */
export function revocationReasonOf(record: StoredAuthorization): RevocationReason | null {
  if (!record.revokedAt) return null;
  return record.revocationReason ?? 'organization';
}
