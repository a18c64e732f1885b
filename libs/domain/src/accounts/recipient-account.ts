import {
  EVENT_TYPES,
  recipientAccountCreatedSchema,
  recipientAccountKeyRotatedSchema,
  type RecipientAccountCreated,
  type RecipientAccountKeyRotated,
} from '@rsd/contracts';
import { checkedEvent, type EventStamp } from '../authorizations/authorization-events';

/**
 * Decision 42: a recipient account as the credentials service keeps it. Like an authorization it
 * holds digests only: the account key exists in the one response that shows it.
 */
export interface StoredRecipientAccount {
  accountId: string;
  name: string | null;
  /** Null once a leak report has ended the current key (decision 43): no key reads the account until one is issued again. */
  keyDigest: string | null;
  /** The key the last rotation replaced, valid until `previousKeyExpiresAt` (decision 19's overlap). */
  previousKeyDigest: string | null;
  previousKeyExpiresAt: string | null;
  /** Decision 43: the digest of the last key of this account a leak report ended (see StoredAuthorization's); absent or null: none. */
  leakedKeyDigest?: string | null;
  /**
   * The organizations whose offers (`keyDelivery: "account"`) the account accepts as they are made; absent:
   * none. Only the credentials service acts on it, so it travels in no event.
   */
  autoAcceptOrganizationIds?: string[];
  createdAt: string;
  revision: number;
}

export function newRecipientAccount(fields: {
  accountId: string;
  name: string | null;
  keyDigest: string;
  now: Date;
}): StoredRecipientAccount & { keyDigest: string } {
  return {
    accountId: fields.accountId,
    name: fields.name,
    keyDigest: fields.keyDigest,
    previousKeyDigest: null,
    previousKeyExpiresAt: null,
    createdAt: fields.now.toISOString(),
    revision: 1,
  };
}

export function recipientAccountCreated(
  account: StoredRecipientAccount & { keyDigest: string },
  stamp: EventStamp,
): RecipientAccountCreated {
  return checkedEvent(recipientAccountCreatedSchema, stamp, EVENT_TYPES.recipientAccountCreated, {
    accountId: account.accountId,
    name: account.name,
    keyDigest: account.keyDigest,
    createdAt: account.createdAt,
    revision: account.revision,
  });
}

/**
 * Decision 42 with decision 19's rules: the new key replaces the current one, which keeps working
 * for the overlap (none with an overlap of 0); a key an earlier rotation kept ends at once, so at
 * most two keys are ever valid.
 */
export function decideRotateAccountKey(
  account: StoredRecipientAccount,
  rotation: { newKeyDigest: string; overlapSeconds: number },
  stamp: EventStamp,
): { account: StoredRecipientAccount; event: RecipientAccountKeyRotated } {
  // A current key a leak report ended (decision 43) has nothing left to overlap.
  const previousKeyExpiresAt =
    rotation.overlapSeconds === 0 || account.keyDigest === null
      ? null
      : new Date(stamp.time.getTime() + rotation.overlapSeconds * 1000).toISOString();
  const rotated: StoredRecipientAccount & { keyDigest: string } = {
    ...account,
    keyDigest: rotation.newKeyDigest,
    previousKeyDigest: previousKeyExpiresAt === null ? null : account.keyDigest,
    previousKeyExpiresAt,
    revision: account.revision + 1,
  };
  const event = checkedEvent(recipientAccountKeyRotatedSchema, stamp, EVENT_TYPES.recipientAccountKeyRotated, {
    accountId: rotated.accountId,
    keyDigest: rotated.keyDigest,
    previousKeyDigest: rotated.previousKeyDigest,
    previousKeyExpiresAt: rotated.previousKeyExpiresAt,
    rotatedAt: stamp.time.toISOString(),
    revision: rotated.revision,
  });
  return { account: rotated, event };
}

/** Whether the account accepts this organization's offers as they are made. */
export function acceptsOffersFrom(account: StoredRecipientAccount, organizationId: string): boolean {
  return account.autoAcceptOrganizationIds?.includes(organizationId) ?? false;
}

/**
 * The organizations the account accepts offers from automatically, replacing the previous list. Offers
 * already waiting keep waiting: trusting an organization answers its next offers, not the ones made before.
 */
export function decideAutoAccept(account: StoredRecipientAccount, organizationIds: readonly string[]): StoredRecipientAccount {
  return { ...account, autoAcceptOrganizationIds: [...organizationIds], revision: account.revision + 1 };
}
