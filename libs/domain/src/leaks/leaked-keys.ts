import {
  authorizationPreviousKeyRevokedSchema,
  EVENT_TYPES,
  recipientAccountKeyRevokedSchema,
  type AuthorizationPreviousKeyRevoked,
  type AuthorizationRevoked,
  type RecipientAccountKeyRevoked,
} from '@rsd/contracts';
import type { StoredRecipientAccount } from '../accounts/recipient-account';
import { checkedEvent, grantIds, type EventStamp } from '../authorizations/authorization-events';
import { revocationReasonOf, statusOf, type StoredAuthorization } from '../authorizations/authorization-record';
import { decideRevoke } from '../authorizations/deciders';
import { digestsMatch, KEY_BODY_LENGTH, CHECKSUM_LENGTH } from '../credential-formats';

/**
 * Decision 43's answer for one reported token, in GitHub's secret-scanning vocabulary:
 * `true_positive` for a key of this product that was live when reported (or that an earlier report
 * of the same key ended), `false_positive` for anything else.
 */
export type LeakLabel = 'true_positive' | 'false_positive';

/** What a leak report does to the record whose key it names: nothing, or the next record and the event it owes. */
export type LeakDecision<Record, Event> =
  { outcome: 'unchanged'; label: LeakLabel } | { outcome: 'changed'; label: 'true_positive'; record: Record; event: Event };

/**
 * The regular expression of a key with this prefix as a secret-scanning provider registers it:
 * the prefix, an underscore, 43 random and 6 checksum base62 characters, not inside a longer word.
 * The checksum is checked after a match (decision 5); no regular expression can.
 */
export function keyPatternOf(prefix: string): string {
  return `\\b${prefix}_[0-9A-Za-z]{${KEY_BODY_LENGTH + CHECKSUM_LENGTH}}\\b`;
}

function matches(stored: string | null | undefined, digest: string): boolean {
  return stored != null && digestsMatch(stored, digest);
}

/** Whether a previous key is still in its overlap at `now` (decision 19). */
function inOverlap(expiresAt: string | null | undefined, now: Date): boolean {
  return expiresAt != null && now.toISOString() < expiresAt;
}

/**
 * Decision 43 for an authorization found by one of its keys' digests. The current key of an active
 * authorization revokes it (`key_leaked`); the previous key of an overlap ends alone, the
 * authorization staying active on its current key. A key that an earlier report ended is a true
 * positive again and changes nothing; a key that no longer worked for another reason (revoked by
 * the organization, expired, past its overlap) is a false positive: it gave access to nothing.
 * Every digest is compared in constant time.
 */
export function decideLeakedGrantKey(
  record: StoredAuthorization,
  keyDigest: string,
  stamp: EventStamp,
): LeakDecision<StoredAuthorization, AuthorizationRevoked | AuthorizationPreviousKeyRevoked> {
  const current = matches(record.keyDigest, keyDigest);
  const previous = matches(record.previousKeyDigest, keyDigest);
  const leakedBefore = matches(record.leakedKeyDigest, keyDigest);
  if (current) {
    const decision = decideRevoke(record, stamp, 'key_leaked');
    if (decision.outcome === 'changed')
      return { outcome: 'changed', label: 'true_positive', record: decision.record, event: decision.event };
    return { outcome: 'unchanged', label: revocationReasonOf(record) === 'key_leaked' ? 'true_positive' : 'false_positive' };
  }
  if (previous && statusOf(record, stamp.time) === 'active' && inOverlap(record.previousKeyExpiresAt, stamp.time)) {
    const ended: StoredAuthorization = {
      ...record,
      previousKeyDigest: null,
      previousKeyExpiresAt: null,
      leakedKeyDigest: keyDigest,
      revision: record.revision + 1,
    };
    return { outcome: 'changed', label: 'true_positive', record: ended, event: authorizationPreviousKeyRevoked(ended, keyDigest, stamp) };
  }
  return { outcome: 'unchanged', label: leakedBefore ? 'true_positive' : 'false_positive' };
}

/**
 * Decision 43 for a recipient account found by one of its keys' digests: the current key, or the
 * previous one within its overlap, ends alone; the account keeps its grants. Without a current key
 * nothing reads the account until a key is issued again (docs/decisions/0043-leaked-keys.md).
 */
export function decideLeakedAccountKey(
  account: StoredRecipientAccount,
  keyDigest: string,
  stamp: EventStamp,
): LeakDecision<StoredRecipientAccount, RecipientAccountKeyRevoked> {
  const current = matches(account.keyDigest, keyDigest);
  const previous = matches(account.previousKeyDigest, keyDigest) && inOverlap(account.previousKeyExpiresAt, stamp.time);
  const leakedBefore = matches(account.leakedKeyDigest, keyDigest);
  if (!current && !previous) return { outcome: 'unchanged', label: leakedBefore ? 'true_positive' : 'false_positive' };
  const ended: StoredRecipientAccount = {
    ...account,
    ...(current ? { keyDigest: null } : { previousKeyDigest: null, previousKeyExpiresAt: null }),
    leakedKeyDigest: keyDigest,
    revision: account.revision + 1,
  };
  return { outcome: 'changed', label: 'true_positive', record: ended, event: recipientAccountKeyRevoked(ended, keyDigest, stamp) };
}

function authorizationPreviousKeyRevoked(
  record: StoredAuthorization,
  previousKeyDigest: string,
  stamp: EventStamp,
): AuthorizationPreviousKeyRevoked {
  return checkedEvent(authorizationPreviousKeyRevokedSchema, stamp, EVENT_TYPES.authorizationPreviousKeyRevoked, {
    ...grantIds(record),
    previousKeyDigest,
    revokedAt: stamp.time.toISOString(),
    revision: record.revision,
  });
}

function recipientAccountKeyRevoked(account: StoredRecipientAccount, keyDigest: string, stamp: EventStamp): RecipientAccountKeyRevoked {
  return checkedEvent(recipientAccountKeyRevokedSchema, stamp, EVENT_TYPES.recipientAccountKeyRevoked, {
    accountId: account.accountId,
    keyDigest,
    revokedAt: stamp.time.toISOString(),
    revision: account.revision,
  });
}
