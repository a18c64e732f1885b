import type { Authorization } from '@rsd/contracts';

/** Decision 54's filters of the grants' list; every one given must hold. */
export interface AuthorizationFilter {
  status?: Authorization['status'];
  recipientType?: Authorization['recipientType'];
  /** Grants that carry this scope (among others). */
  scope?: string;
  /** Grants with an expiry before this instant (grants that never expire are not among them). */
  expiresBefore?: string;
  /** Grants not used since this instant: last used before it, or never. */
  lastUsedBefore?: string;
  recipientAccountId?: string;
}

/** A place in the grants' list: a page starts strictly after it. */
export type GrantListPosition = Pick<Authorization, 'createdAt' | 'clientId'>;

/**
 * The grants that match `filter`. Paged (`page`): in the list's order (newest first, then by Client
 * ID), at most `limit` from strictly after `after`, and `next`, the page's last grant, when more follow.
 */
export function selectGrants(
  all: readonly Authorization[],
  filter: AuthorizationFilter,
  page?: { limit: number; after?: GrantListPosition },
): { authorizations: Authorization[]; next: GrantListPosition | undefined } {
  const matching = all.filter(
    (grant) =>
      (filter.status === undefined || grant.status === filter.status) &&
      (filter.recipientType === undefined || grant.recipientType === filter.recipientType) &&
      (filter.scope === undefined || grant.scopes.includes(filter.scope as Authorization['scopes'][number])) &&
      (filter.recipientAccountId === undefined || grant.recipientAccountId === filter.recipientAccountId) &&
      (filter.expiresBefore === undefined || (grant.expiresAt !== null && grant.expiresAt < filter.expiresBefore)) &&
      (filter.lastUsedBefore === undefined || grant.lastUsedAt === null || grant.lastUsedAt < filter.lastUsedBefore),
  );
  if (!page) return { authorizations: matching, next: undefined };
  const ordered = [...matching].sort(listOrder);
  const after = page.after;
  const start = after ? ordered.findIndex((grant) => listOrder(grant, after) > 0) : 0;
  const rest = start < 0 ? [] : ordered.slice(start);
  const taken = rest.slice(0, page.limit);
  return { authorizations: taken, next: rest.length > page.limit ? taken.at(-1) : undefined };
}

/** Newest first by `createdAt`, then by Client ID: the store's order, and a total one. */
function listOrder(a: GrantListPosition, b: GrantListPosition): number {
  if (a.createdAt !== b.createdAt) return a.createdAt > b.createdAt ? -1 : 1;
  return a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0;
}
