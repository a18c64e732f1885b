import type { StoredAuthorization, StoredRecipientAccount } from '@rsd/domain';
import type { AccessReviewStore } from './access-review-store';
import type { OutboxEntry, PendingOutbox } from './outbox';

/**
 * Records and the events they owe are written together in one write, so an event is never lost
 * and never emitted for a change that was not stored.
 */
export interface AuthorizationStore extends AccessReviewStore {
  create(record: StoredAuthorization, outbox: readonly OutboxEntry[]): Promise<void>;
  /** Writes only if the stored revision is still `expectedRevision`; false means someone else changed it first. */
  update(record: StoredAuthorization, expectedRevision: number, outbox: readonly OutboxEntry[]): Promise<boolean>;
  find(organizationId: string, clientId: string): Promise<StoredAuthorization | undefined>;
  /** Decision 42: by Client ID alone, for a recipient account acting on a grant it holds (the caller checks that it does). */
  findByClientId(clientId: string): Promise<StoredAuthorization | undefined>;
  /** Newest first. */
  list(organizationId: string): Promise<StoredAuthorization[]>;
  /**
   * Decision 38: the authorization whose current claim link has this token digest (a spent one
   * included: it stays until a new link replaces it), through an index; undefined when none has.
   */
  findByClaimToken(tokenDigest: string): Promise<StoredAuthorization | undefined>;
  /** Authorizations neither revoked nor marked expired whose `expiresAt` is at or before `now`. */
  findDueForExpiry(now: Date, limit: number): Promise<StoredAuthorization[]>;
  /**
   * Decision 44: active authorizations whose next expiry notice (`nextExpiryNoticeAt` in the domain)
   * is at or before `now`, soonest first, through an index.
   */
  findDueForExpiryNotice(now: Date, limit: number): Promise<StoredAuthorization[]>;
  /**
   * Decision 42: recipient accounts live beside the authorizations and share their outbox (the
   * relay publishes both). Written like records: created once, changed at a revision.
   */
  createAccount(account: StoredRecipientAccount, outbox: readonly OutboxEntry[]): Promise<void>;
  updateAccount(account: StoredRecipientAccount, expectedRevision: number, outbox: readonly OutboxEntry[]): Promise<boolean>;
  findAccount(accountId: string): Promise<StoredRecipientAccount | undefined>;
  /**
   * Decision 43: the authorization whose current key, previous key or last leaked key (`leakedKeyDigest`)
   * has this digest, through an index; the caller compares in constant time.
   */
  findByKeyDigest(keyDigest: string): Promise<StoredAuthorization | undefined>;
  /**
   * The account whose current key, previous key or last leaked key (decision 43) has this digest,
   * through an index; the caller verifies in constant time which one, and whether it still works.
   */
  findAccountByKeyDigest(keyDigest: string): Promise<StoredRecipientAccount | undefined>;
  /**
   * Decision 50: the grants offered to this recipient account that wait for its answer (neither accepted,
   * revoked nor marked expired), in Client ID order from the highest, at most `limit`, only those below
   * `before` when it is given; through an index of the waiting offers alone.
   */
  listOffers(accountId: string, page: { limit: number; before?: string }): Promise<StoredAuthorization[]>;
  /**
   * Decision 56: forgets every authorization of the organization (their outbox entries with them): its
   * offboarding, once their revocations are published. Resolves with the Client IDs forgotten. Idempotent.
   */
  purgeOrganization(organizationId: string): Promise<string[]>;
  /**
   * Decision 56: which of these Client IDs name an authorization the store holds (one query, however many):
   * the access log takes records only of those, so that reads recorded late bring nothing of a purged
   * organization back.
   */
  knownClientIds(clientIds: readonly string[]): Promise<Set<string>>;
  /**
   * Decision 56: the grants this recipient account holds (`recipientAccountId`), ended ones included, for
   * its erasure. Rare: a scan is allowed, no index is kept for it.
   */
  listHeldByAccount(accountId: string): Promise<StoredAuthorization[]>;
  /**
   * Decision 56's retention of alert addresses: up to `limit` authorizations that keep an address seen
   * (`activity.addresses`) or an alert's address from before `before`. Hourly and rare to match: a scan
   * is allowed, no index is kept for it.
   */
  findWithAlertAddressesBefore(before: Date, limit: number): Promise<StoredAuthorization[]>;
  pendingOutbox(limit: number): Promise<PendingOutbox[]>;
  markPublished(clientId: string, entryIds: readonly string[]): Promise<void>;
  close(): Promise<void>;
}
