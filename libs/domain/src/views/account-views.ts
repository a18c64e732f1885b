import {
  EVENT_TYPES,
  type AuthorizationStatus,
  type PortfolioCustomer,
  type RecipientAccountCreated,
  type RecipientAccountKeyRotated,
  type RecipientType,
  type Scope,
} from '@rsd/contracts';
import { hasExpired } from '../expiry';
import { revisionVersion, viewEvents, type ListedView, type ViewDefinition } from './view';
import { erasableVersion, withRotatedKey } from './credential-view';

/** Decision 42: what the read API knows of a recipient account: its name and its keys' digests. */
export interface RecipientAccountView {
  accountId: string;
  name: string | null;
  /** Null once a leak report ended the current key (decision 43): no key reads the account. */
  keyDigest: string | null;
  previousKeyDigest: string | null;
  previousKeyExpiresAt: string | null;
  revision: number;
  /** Decision 56: the account's own data was erased (its name is null for good); absent otherwise. */
  recipientErased?: true;
}

export const recipientAccountView: ViewDefinition<RecipientAccountView> = {
  name: 'recipient_accounts',

  ...viewEvents<RecipientAccountView>()({
    // An erasure names its subject: an account's (`account:<id>`) is this view's document; a grant's matches none.
    keyOf: (event) => ('accountId' in event.data ? event.data.accountId : event.data.subject.replace(/^account:/, '')),
    on: {
      [EVENT_TYPES.recipientAccountCreated]: (state, event) => {
        if (state && state.revision >= event.data.revision) return state;
        const { accountId, name, keyDigest, revision } = event.data;
        return { accountId, name, keyDigest, previousKeyDigest: null, previousKeyExpiresAt: null, revision };
      },
      [EVENT_TYPES.recipientAccountKeyRotated]: withRotatedKey,
      [EVENT_TYPES.recipientAccountKeyRevoked]: (state, event) => {
        // Decision 43: the reported key ends alone, whichever of the two it is.
        if (!state || state.revision >= event.data.revision) return state;
        const { keyDigest, revision } = event.data;
        if (state.keyDigest === keyDigest) return { ...state, keyDigest: null, revision };
        if (state.previousKeyDigest === keyDigest) return { ...state, previousKeyDigest: null, previousKeyExpiresAt: null, revision };
        return { ...state, revision };
      },
      [EVENT_TYPES.recipientErased]: (state, event) =>
        state && !state.recipientErased && event.data.subject.startsWith('account:')
          ? { ...state, name: null, recipientErased: true }
          : state,
    },
  }),

  versionOf: erasableVersion,
};

/**
 * Decision 42: which account an account key's digest names, so that `/portfolio` finds the account
 * from the key alone. One document per key ever issued, never changed: whether the key still works
 * is the account's to say (its current and overlapping digests), compared in constant time.
 */
export interface AccountKeyView {
  keyDigest: string;
  accountId: string;
}

export const accountKeyView: ViewDefinition<AccountKeyView> = {
  name: 'recipient_account_keys',
  newestWins: true,

  ...viewEvents<AccountKeyView>()({
    keyOf: (event) => event.data.keyDigest,
    on: {
      [EVENT_TYPES.recipientAccountCreated]: keyOfAccount,
      [EVENT_TYPES.recipientAccountKeyRotated]: keyOfAccount,
    },
  }),

  // A digest names one account forever: the first write stands, and a replay changes nothing.
  versionOf: () => revisionVersion(1),
};

/** Decision 42: one grant an account holds, as its portfolio lists it. */
export interface PortfolioGrantView {
  clientId: string;
  accountId: string;
  organizationId: string;
  recipientType: RecipientType;
  scopes: Scope[];
  expiresAt: string | null;
  status: AuthorizationStatus;
  revision: number;
}

/** Active grants sort after every ended one, so a page of active grants is one index range (`atLeast: ACTIVE_GRANTS`). */
export const ACTIVE_GRANTS = '1:';
const ENDED_GRANTS = '0:';

/** Where a page of an account's active grants starts after `clientId` (the cursor): the order is by Client ID, descending. */
export function activeGrantSortKey(clientId: string): string {
  return `${ACTIVE_GRANTS}${clientId}`;
}

/**
 * Decision 42: an account's grants, listed per account. A grant joins by its Created event (granted
 * to the account) or its JoinedAccount event (claimed into it), and ends by a revocation or an
 * expiry, which moves it out of the active range, so a page of the portfolio never reads ended ones.
 */
export const portfolioGrantView: ListedView<PortfolioGrantView> = {
  name: 'portfolio_grants',
  partitionOf: (state) => state.accountId,
  sortKeyOf: (state) => `${state.status === 'active' ? ACTIVE_GRANTS : ENDED_GRANTS}${state.clientId}`,

  ...viewEvents<PortfolioGrantView>()({
    keyOf: (event) => event.data.clientId,
    on: {
      // Only a grant made for an account: one with a key of its own is no portfolio's.
      [EVENT_TYPES.authorizationCreated]: (state, event) => {
        const { recipientAccountId } = event.data;
        return recipientAccountId ? joined(state, { ...event.data, recipientAccountId }) : state;
      },
      [EVENT_TYPES.authorizationJoinedAccount]: (state, event) => joined(state, event.data),
      [EVENT_TYPES.authorizationRevoked]: (state, event) => ended(state, 'revoked', event.data.revision),
      [EVENT_TYPES.authorizationExpired]: (state, event) => ended(state, 'expired', event.data.revision),
    },
  }),

  versionOf: (state) => revisionVersion(state.revision),
};

/**
 * The same grants listed per organization (the notifier's): which accounts hold a grant of the
 * organization whose score changed, so a portfolio's webhooks hear of it (decision 42).
 */
export const organizationPortfolioGrantView: ListedView<PortfolioGrantView> = {
  ...portfolioGrantView,
  name: 'organization_portfolio_grants',
  partitionOf: (state) => state.organizationId,
};

/** The first key of an account, or its new one: the first write stands. */
function keyOfAccount(state: AccountKeyView | undefined, event: RecipientAccountCreated | RecipientAccountKeyRotated): AccountKeyView {
  return state ?? { keyDigest: event.data.keyDigest, accountId: event.data.accountId };
}

/** A grant as it joins an account (granted to it, or claimed into it): active, unless the view holds a newer revision. */
function joined(
  state: PortfolioGrantView | undefined,
  grant: Pick<PortfolioGrantView, 'clientId' | 'organizationId' | 'recipientType' | 'scopes' | 'expiresAt' | 'revision'> & {
    recipientAccountId: string;
  },
): PortfolioGrantView | undefined {
  if (state && state.revision >= grant.revision) return state;
  const { clientId, recipientAccountId, organizationId, recipientType, scopes, expiresAt, revision } = grant;
  return {
    clientId,
    accountId: recipientAccountId,
    organizationId,
    recipientType,
    scopes: [...scopes],
    expiresAt,
    status: 'active',
    revision,
  };
}

/** A grant the view has never seen in an account (one with its own key) stays unseen. */
function ended(state: PortfolioGrantView | undefined, status: AuthorizationStatus, revision: number): PortfolioGrantView | undefined {
  if (!state || state.revision >= revision) return state;
  return { ...state, status, revision };
}

/** Active now, whether or not its Expired event has arrived. */
export function grantActive(grant: PortfolioGrantView, now: Date): boolean {
  return grant.status === 'active' && !hasExpired(grant.expiresAt, now);
}

/**
 * A grant as a portfolio lists it: what its organization granted, nothing of its keys or its use. The
 * same from the read API's portfolio view and from the credentials service's record.
 */
export function portfolioCustomerOf(
  grant: Pick<PortfolioCustomer, 'clientId' | 'organizationId' | 'recipientType' | 'expiresAt'> & { scopes: readonly Scope[] },
): PortfolioCustomer {
  return {
    clientId: grant.clientId,
    organizationId: grant.organizationId,
    recipientType: grant.recipientType,
    scopes: [...grant.scopes],
    expiresAt: grant.expiresAt,
  };
}
