import type { Authorization, AuthorizationExpired, AuthorizationKeyRotated, AuthorizationRevoked } from '@rsd/contracts';
import type { RecordUsage } from '../access/usage';
import { hasExpired } from '../expiry';
import { statusOf, type StoredAuthorization } from './authorization-record';
import { authorizationExpired, authorizationKeyRotated, authorizationRevoked, type EventStamp } from './authorization-events';

/** What a change decides: either nothing to do, or the next record and the event it owes. */
export type Decision<E> =
  { outcome: 'unchanged'; record: StoredAuthorization } | { outcome: 'changed'; record: StoredAuthorization; event: E };

/**
 * The resource every answer carries: the key's digest and the bookkeeping stay inside. Its use
 * (decision 20) comes from the access log, which the caller reads: this stays free of I/O.
 */
export function toAuthorization(record: StoredAuthorization, now: Date, { lastUsedAt, usage }: RecordUsage): Authorization {
  return {
    clientId: record.clientId,
    organizationId: record.organizationId,
    recipientType: record.recipientType,
    recipientName: record.recipientName,
    scopes: [...record.scopes],
    expiresAt: record.expiresAt,
    status: statusOf(record, now),
    createdAt: record.createdAt,
    revokedAt: record.revokedAt,
    allowedCidrs: record.allowedCidrs ? [...record.allowedCidrs] : null,
    lastUsedAt,
    usage: { ...usage },
  };
}

/**
 * Revoking is idempotent: a revoked authorization stays as it was. An expired one is left expired,
 * with no event: it already grants nothing, and its history should say why it stopped working.
 */
export function decideRevoke(record: StoredAuthorization, stamp: EventStamp): Decision<AuthorizationRevoked> {
  if (statusOf(record, stamp.time) !== 'active') return { outcome: 'unchanged', record };
  const revoked: StoredAuthorization = { ...record, revokedAt: stamp.time.toISOString(), revision: record.revision + 1 };
  return { outcome: 'changed', record: revoked, event: authorizationRevoked(revoked, stamp) };
}

/** Marks an authorization expired once its expiry has passed, unless it was revoked or marked already. */
export function decideExpire(record: StoredAuthorization, stamp: EventStamp): Decision<AuthorizationExpired> {
  if (!hasExpired(record.expiresAt, stamp.time) || record.revokedAt !== null || record.expiredAt !== null)
    return { outcome: 'unchanged', record };
  const expired: StoredAuthorization = { ...record, expiredAt: stamp.time.toISOString(), revision: record.revision + 1 };
  return { outcome: 'changed', record: expired, event: authorizationExpired(expired, stamp) };
}

/**
 * Decision 19: the new key's digest replaces the current one, which stays valid for the overlap,
 * never past the authorization's expiry; a key that an earlier rotation kept is dropped at once, so
 * at most two keys are ever valid. A revoked or expired authorization is not rotated.
 */
export function decideRotate(
  record: StoredAuthorization,
  rotation: { newKeyDigest: string; overlapSeconds: number },
  stamp: EventStamp,
):
  | { outcome: 'inactive'; record: StoredAuthorization }
  | { outcome: 'changed'; record: StoredAuthorization; event: AuthorizationKeyRotated } {
  if (statusOf(record, stamp.time) !== 'active') return { outcome: 'inactive', record };
  const overlapEnds = new Date(stamp.time.getTime() + rotation.overlapSeconds * 1000).toISOString();
  const previousKeyExpiresAt =
    rotation.overlapSeconds === 0 ? null : record.expiresAt !== null && record.expiresAt < overlapEnds ? record.expiresAt : overlapEnds;
  const rotated: StoredAuthorization = {
    ...record,
    keyDigest: rotation.newKeyDigest,
    previousKeyDigest: previousKeyExpiresAt === null ? null : record.keyDigest,
    previousKeyExpiresAt,
    revision: record.revision + 1,
  };
  return { outcome: 'changed', record: rotated, event: authorizationKeyRotated(rotated, stamp) };
}
