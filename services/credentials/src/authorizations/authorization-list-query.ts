import type { Request } from 'express';
import {
  AUTHORIZATION_LIST_LIMIT,
  authorizationStatusSchema,
  recipientAccountIdSchema,
  recipientTypeSchema,
  scopeSchema,
  type Authorization,
} from '@rsd/contracts';
import { selectGrants, type AuthorizationFilter, type GrantListPosition } from '@rsd/domain';
import { cursorParts, instantParameter, opaqueCursor, pageLimitOf, parsedParameter, singleQueryParameter } from '@rsd/platform';

export interface AuthorizationListQuery {
  filter: AuthorizationFilter;
  /** Undefined: every grant that matches, unpaged, as the list answered before paging. */
  page?: { limit: number; after?: GrantListPosition };
}

/** The query's filters and page; a bad one is INVALID_PARAMETER naming it, a repeated one too. */
export function authorizationListQueryOf(req: Request): AuthorizationListQuery {
  // In this order, so that of two bad parameters the same one is named as before; one not given is undefined, which matches every grant.
  const filter: AuthorizationFilter = {
    status: parsedParameter(req, 'status', authorizationStatusSchema),
    recipientType: parsedParameter(req, 'recipientType', recipientTypeSchema),
    scope: parsedParameter(req, 'scope', scopeSchema),
    recipientAccountId: parsedParameter(req, 'recipientAccountId', recipientAccountIdSchema),
    expiresBefore: instantParameter(req, 'expiresBefore'),
    lastUsedBefore: instantParameter(req, 'lastUsedBefore'),
  };
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
  { filter, page }: AuthorizationListQuery,
): { authorizations: Authorization[]; nextCursor: string | null } {
  const { authorizations, next } = selectGrants(all, filter, page);
  return { authorizations, nextCursor: next ? cursorAfter(next) : null };
}

function cursorAfter({ createdAt, clientId }: GrantListPosition): string {
  return opaqueCursor(`g1|${createdAt}|${clientId}`);
}

function positionOfCursor(cursor: string): GrantListPosition {
  return cursorParts(cursor, /^g1\|([0-9T:.Z-]{20,30})\|([a-z0-9]{1,16}_[A-Za-z0-9]{16,64})$/, ['createdAt', 'clientId']);
}
