import type { Request } from 'express';
import {
  AUTHORIZATION_LIST_LIMIT,
  authorizationStatusSchema,
  recipientAccountIdSchema,
  recipientTypeSchema,
  scopeSchema,
  type Authorization,
} from '@rsd/contracts';
import { cursorParts, instantParameter, opaqueCursor, pageLimitOf, parsedParameter, singleQueryParameter } from '@rsd/platform';

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

export interface AuthorizationListQuery {
  filter: AuthorizationFilter;
  /** Undefined: every grant that matches, unpaged, as the list answered before paging. */
  page?: { limit: number; after?: { createdAt: string; clientId: string } };
}

/** The query's filters and page; a bad one is INVALID_PARAMETER naming it, a repeated one too. */
export function authorizationListQueryOf(req: Request): AuthorizationListQuery {
  const filter: AuthorizationFilter = {};
  const status = parsedParameter(req, 'status', authorizationStatusSchema);
  const recipientType = parsedParameter(req, 'recipientType', recipientTypeSchema);
  const scope = parsedParameter(req, 'scope', scopeSchema);
  const recipientAccountId = parsedParameter(req, 'recipientAccountId', recipientAccountIdSchema);
  const expiresBefore = instantParameter(req, 'expiresBefore');
  const lastUsedBefore = instantParameter(req, 'lastUsedBefore');
  if (status !== undefined) filter.status = status;
  if (recipientType !== undefined) filter.recipientType = recipientType;
  if (scope !== undefined) filter.scope = scope;
  if (recipientAccountId !== undefined) filter.recipientAccountId = recipientAccountId;
  if (expiresBefore !== undefined) filter.expiresBefore = expiresBefore;
  if (lastUsedBefore !== undefined) filter.lastUsedBefore = lastUsedBefore;
  const cursor = singleQueryParameter(req, 'cursor');
  const paged = cursor !== undefined || singleQueryParameter(req, 'limit') !== undefined;
  if (!paged) return { filter };
  return {
    filter,
    page: { limit: pageLimitOf(req, AUTHORIZATION_LIST_LIMIT), ...(cursor === undefined ? {} : { after: positionOfCursor(cursor) }) },
  };
}

/** The grants that match, in the list's order (newest first, then by Client ID), and the page asked for. */
export function selectAuthorizations(
  all: readonly Authorization[],
  query: AuthorizationListQuery,
): { authorizations: Authorization[]; nextCursor: string | null } {
  const { filter, page } = query;
  const matching = all.filter(
    (grant) =>
      (filter.status === undefined || grant.status === filter.status) &&
      (filter.recipientType === undefined || grant.recipientType === filter.recipientType) &&
      (filter.scope === undefined || grant.scopes.includes(filter.scope as Authorization['scopes'][number])) &&
      (filter.recipientAccountId === undefined || grant.recipientAccountId === filter.recipientAccountId) &&
      (filter.expiresBefore === undefined || (grant.expiresAt !== null && grant.expiresAt < filter.expiresBefore)) &&
      (filter.lastUsedBefore === undefined || grant.lastUsedAt === null || grant.lastUsedAt < filter.lastUsedBefore),
  );
  if (!page) return { authorizations: matching, nextCursor: null };
  const ordered = [...matching].sort(listOrder);
  const after = page.after;
  const start = after ? ordered.findIndex((grant) => listOrder(grant, after) > 0) : 0;
  const rest = start < 0 ? [] : ordered.slice(start);
  const taken = rest.slice(0, page.limit);
  const last = taken.at(-1);
  return { authorizations: taken, nextCursor: rest.length > page.limit && last ? cursorAfter(last) : null };
}

/** Newest first by `createdAt`, then by Client ID: the store's order, and a total one. */
function listOrder(a: Pick<Authorization, 'createdAt' | 'clientId'>, b: Pick<Authorization, 'createdAt' | 'clientId'>): number {
  if (a.createdAt !== b.createdAt) return a.createdAt > b.createdAt ? -1 : 1;
  return a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0;
}

function cursorAfter({ createdAt, clientId }: Pick<Authorization, 'createdAt' | 'clientId'>): string {
  return opaqueCursor(`g1|${createdAt}|${clientId}`);
}

function positionOfCursor(cursor: string): { createdAt: string; clientId: string } {
  return cursorParts(cursor, /^g1\|([0-9T:.Z-]{20,30})\|([a-z0-9]{1,16}_[A-Za-z0-9]{16,64})$/, ['createdAt', 'clientId']);
}
