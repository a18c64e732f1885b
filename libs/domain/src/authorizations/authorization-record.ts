import type { GrantActivity, StoredAlert } from '../alerts/grant-alerts';
import type { AuthorizationStatus, RecipientType, RevocationReason, Scope } from '@rsd/contracts';
import { hasExpired } from '../expiry';

/** The credentials service's own record of an authorization. Holds a digest of the key, never the key. */
export interface StoredAuthorization {
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
  createdAt: string;
  revokedAt: string | null;
  /** Why it was revoked; absent on records from before decision 42 (then: by the organization). */
  revocationReason?: RevocationReason | null;
  expiredAt: string | null;
  /** Decision 44: what the grant's reads left to remember for its alerts (alerts/grant-alerts.ts); absent before any. */
  activity?: GrantActivity;
  /** Decision 44: the grant's last alerts, newest first (at most 100). */
  alerts?: StoredAlert[];
  /** Bumped by every change; also the revision of the event that change emits. */
  revision: number;
}

export function statusOf(record: StoredAuthorization, now: Date): AuthorizationStatus {
  if (record.revokedAt) return 'revoked';
  if (record.expiredAt || hasExpired(record.expiresAt, now)) return 'expired';
  return 'active';
}

/** Decision 38: false only while a key delivered by claim link waits to be claimed (a grant held by an account has been). */
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
