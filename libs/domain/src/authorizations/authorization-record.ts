import type { AuthorizationStatus, RecipientType, Scope } from '@rsd/contracts';
import { hasExpired } from '../expiry';

/** The credentials service's own record of an authorization. Holds a digest of the key, never the key. */
export interface StoredAuthorization {
  clientId: string;
  organizationId: string;
  recipientType: RecipientType;
  recipientName: string | null;
  scopes: Scope[];
  keyDigest: string;
  /** Decision 19: the key the last rotation replaced, valid until `previousKeyExpiresAt` (records from before rotation lack both). */
  previousKeyDigest?: string | null;
  previousKeyExpiresAt?: string | null;
  /** Decision 22: reads only from these addresses or ranges; null or absent: from anywhere. */
  allowedCidrs?: string[] | null;
  expiresAt: string | null;
  createdAt: string;
  revokedAt: string | null;
  expiredAt: string | null;
  /** Bumped by every change; also the revision of the event that change emits. */
  revision: number;
}

export function statusOf(record: StoredAuthorization, now: Date): AuthorizationStatus {
  if (record.revokedAt) return 'revoked';
  if (record.expiredAt || hasExpired(record.expiresAt, now)) return 'expired';
  return 'active';
}
