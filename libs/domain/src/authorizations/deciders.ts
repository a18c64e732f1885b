import type {
  Authorization,
  AuthorizationExpired,
  AuthorizationKeyClaimed,
  AuthorizationJoinedAccount,
  AuthorizationKeyRotated,
  AuthorizationRevoked,
  RevocationReason,
} from '@rsd/contracts';
import type { RecordUsage } from '../access/usage';
import { hasExpired } from '../expiry';
import {
  awaitsAcceptance,
  heldByAccount,
  keyClaimed,
  revocationReasonOf,
  statusOf,
  type StoredAuthorization,
} from './authorization-record';
import {
  authorizationExpired,
  authorizationJoinedAccount,
  authorizationKeyClaimed,
  authorizationKeyRotated,
  authorizationRevoked,
  type EventStamp,
} from './authorization-events';

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
    keyClaimed: keyClaimed(record),
    claimedAt: record.claimedAt ?? null,
    claimedFromAddress: record.claimedFromAddress ?? null,
    revocationReason: revocationReasonOf(record),
    // An offer names the account as the organization gave it, and no more until the account has accepted.
    recipientAccountId: record.recipientAccountId ?? record.offeredAccountId ?? null,
    recipientAccountName: heldByAccount(record) ? (record.recipientAccountName ?? null) : null,
  };
}

/**
 * Revoking is idempotent: a revoked authorization stays as it was. An expired one is left expired,
 * with no event: it already grants nothing, and its history should say why it stopped working. An
 * offer still waiting for its account is revoked as any grant.
 */
export function decideRevoke(
  record: StoredAuthorization,
  stamp: EventStamp,
  reason: RevocationReason = 'organization',
): Decision<AuthorizationRevoked> {
  const status = statusOf(record, stamp.time);
  if (status !== 'active' && status !== 'pending') return { outcome: 'unchanged', record };
  const revoked = { ...record, revokedAt: stamp.time.toISOString(), revocationReason: reason, revision: record.revision + 1 };
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
 * at most two keys are ever valid. A revoked or expired authorization is not rotated, nor one whose
 * key waits to be claimed.
 */
export function decideRotate(
  record: StoredAuthorization,
  rotation: { newKeyDigest: string; overlapSeconds: number },
  stamp: EventStamp,
):
  | { outcome: 'inactive' | 'unclaimed' | 'heldByAccount'; record: StoredAuthorization }
  | { outcome: 'changed'; record: StoredAuthorization; event: AuthorizationKeyRotated } {
  const status = statusOf(record, stamp.time);
  // Decision 42: the account's key reads it (an offered grant once accepted); that key is rotated by the account, not by the organization.
  if (status === 'pending' || (status === 'active' && heldByAccount(record))) return { outcome: 'heldByAccount', record };
  if (status !== 'active') return { outcome: 'inactive', record };
  // Decision 38: a key waiting for its recipient is not issued to the organization instead; a new claim link is.
  if (record.keyDigest === null) return { outcome: 'unclaimed', record };
  const overlapEnds = new Date(stamp.time.getTime() + rotation.overlapSeconds * 1000).toISOString();
  const previousKeyExpiresAt =
    rotation.overlapSeconds === 0 ? null : record.expiresAt !== null && record.expiresAt < overlapEnds ? record.expiresAt : overlapEnds;
  const rotated = {
    ...record,
    keyDigest: rotation.newKeyDigest,
    previousKeyDigest: previousKeyExpiresAt === null ? null : record.keyDigest,
    previousKeyExpiresAt,
    revision: record.revision + 1,
  };
  return { outcome: 'changed', record: rotated, event: authorizationKeyRotated(rotated, stamp) };
}

/**
 * Decision 38: what a claim link found by its token can still do. `used` once claimed (a second use
 * is told apart from an unknown link); `expired` past its own end, or once the authorization it
 * grants is revoked or expired (revoking kills the link); `open` otherwise.
 */
export type ClaimLinkState = 'open' | 'used' | 'expired';

export function claimLinkStateOf(record: StoredAuthorization, now: Date): ClaimLinkState {
  if (keyClaimed(record)) return 'used';
  if (statusOf(record, now) !== 'active') return 'expired';
  if (!record.claimExpiresAt || hasExpired(record.claimExpiresAt, now)) return 'expired';
  return 'open';
}

/** A link lasts `validSeconds`, never past the authorization's own expiry (a link to a grant that has ended would be a lie). */
export function claimLinkExpiry(expiresAt: string | null, validSeconds: number, now: Date): string {
  const end = new Date(now.getTime() + validSeconds * 1000).toISOString();
  return expiresAt !== null && expiresAt < end ? expiresAt : end;
}

/**
 * Decision 38: the claim creates the key. Only an open link claims; the new key's digest becomes the
 * authorization's and the KeyClaimed event tells the read API, as rotation does. The link's digest
 * stays, spent, so that another use of it answers `used`.
 */
export function decideClaim(
  record: StoredAuthorization,
  claim: { newKeyDigest: string; clientAddress: string | null },
  stamp: EventStamp,
):
  | { outcome: 'used' | 'expired'; record: StoredAuthorization }
  | { outcome: 'changed'; record: StoredAuthorization; event: AuthorizationKeyClaimed } {
  return spendClaimLink(record, { keyDigest: claim.newKeyDigest }, claim.clientAddress, stamp, authorizationKeyClaimed);
}

/**
 * Decision 42: the claim puts the grant into a recipient account instead of making a key. Only an
 * open link does; the link is spent as by a key claim, and the account's key reads the grant from
 * the moment the JoinedAccount event reaches the read API.
 */
export function decideJoinAccount(
  record: StoredAuthorization,
  join: { accountId: string; accountName: string | null; clientAddress: string | null },
  stamp: EventStamp,
):
  | { outcome: 'used' | 'expired'; record: StoredAuthorization }
  | { outcome: 'changed'; record: StoredAuthorization; event: AuthorizationJoinedAccount } {
  const changes = { recipientAccountId: join.accountId, recipientAccountName: join.accountName };
  return spendClaimLink(record, changes, join.clientAddress, stamp, authorizationJoinedAccount);
}

/**
 * What a key claim and an account join share: only an open link is spent; the record takes `changes`,
 * when and from where the link was used, and its next revision, and owes the event `eventOf` makes.
 */
function spendClaimLink<C extends Partial<StoredAuthorization>, E>(
  record: StoredAuthorization,
  changes: C,
  clientAddress: string | null,
  stamp: EventStamp,
  eventOf: (next: StoredAuthorization & C, stamp: EventStamp) => E,
): { outcome: 'used' | 'expired'; record: StoredAuthorization } | { outcome: 'changed'; record: StoredAuthorization; event: E } {
  const state = claimLinkStateOf(record, stamp.time);
  if (state !== 'open') return { outcome: state, record };
  const next = {
    ...record,
    ...changes,
    claimedAt: stamp.time.toISOString(),
    claimedFromAddress: clientAddress,
    revision: record.revision + 1,
  };
  return { outcome: 'changed', record: next, event: eventOf(next, stamp) };
}

/**
 * Decision 38: a new link for an unclaimed, active authorization; the old link's digest is replaced,
 * so the old link is unknown from now on. Nothing the read API knows changes: no event.
 */
export function decideNewClaimLink(
  record: StoredAuthorization,
  link: { tokenDigest: string; validSeconds: number },
  now: Date,
): { outcome: 'claimed' | 'inactive' | 'offered'; record: StoredAuthorization } | { outcome: 'changed'; record: StoredAuthorization } {
  if (keyClaimed(record)) return { outcome: 'claimed', record };
  const status = statusOf(record, now);
  // Offered to a recipient account: that account's key reads it once accepted; it never gets a key or a link of its own.
  if (status === 'pending') return { outcome: 'offered', record };
  if (status !== 'active') return { outcome: 'inactive', record };
  return {
    outcome: 'changed',
    record: {
      ...record,
      claimTokenDigest: link.tokenDigest,
      claimExpiresAt: claimLinkExpiry(record.expiresAt, link.validSeconds, now),
      revision: record.revision + 1,
    },
  };
}

/**
 * What an account's answer to an offer decides. `notOffered`: the grant was not offered to this account
 * (or does not exist: the caller answers both alike). `notPending`: the offer has ended, or has been
 * answered the other way. `unchanged`: answered this way already, so a repeated answer changes nothing.
 */
export type OfferAnswer<E> =
  | { outcome: 'notOffered' | 'notPending' | 'unchanged'; record: StoredAuthorization }
  | { outcome: 'changed'; record: StoredAuthorization; event: E };

/**
 * The account accepts a grant offered to it: it holds the grant from now on, exactly as a grant claimed
 * into it by a link (the JoinedAccount event is what the read API and the notifier act on). The record
 * keeps the account's name, which the organization may see now that the account has consented.
 */
export function decideAcceptOffer(
  record: StoredAuthorization,
  account: { accountId: string; name: string | null },
  stamp: EventStamp,
): OfferAnswer<AuthorizationJoinedAccount> {
  if (record.offeredAccountId !== account.accountId) return { outcome: 'notOffered', record };
  const status = statusOf(record, stamp.time);
  if (status === 'active' && record.recipientAccountId === account.accountId) return { outcome: 'unchanged', record };
  if (status !== 'pending') return { outcome: 'notPending', record };
  const joined = { ...record, recipientAccountId: account.accountId, recipientAccountName: account.name, revision: record.revision + 1 };
  return { outcome: 'changed', record: joined, event: authorizationJoinedAccount(joined, stamp) };
}

/**
 * The account declines a grant offered to it: it ends as a revocation does, with the reason
 * `declined_by_recipient`, which the organization sees. A grant the account has accepted is left by
 * releasing it instead.
 */
export function decideDeclineOffer(
  record: StoredAuthorization,
  account: { accountId: string },
  stamp: EventStamp,
): OfferAnswer<AuthorizationRevoked> {
  if (record.offeredAccountId !== account.accountId) return { outcome: 'notOffered', record };
  if (awaitsAcceptance(record) && revocationReasonOf(record) === 'declined_by_recipient') return { outcome: 'unchanged', record };
  if (statusOf(record, stamp.time) !== 'pending') return { outcome: 'notPending', record };
  const decision = decideRevoke(record, stamp, 'declined_by_recipient');
  return decision.outcome === 'changed' ? decision : { outcome: 'notPending', record };
}
