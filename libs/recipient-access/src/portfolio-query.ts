import type { Request } from 'express';
import { PORTFOLIO_LIMIT } from '@rsd/contracts';
import { cursorParts, opaqueCursor, pageLimitOf, singleQueryParameter } from '@rsd/platform';

/**
 * A portfolio page (decision 42), read on the read API, or a page of an account's offers on the credentials
 * service (decision 50): how many grants, and the Client ID the previous page ended at (this page holds only
 * later ones in the order).
 */
export interface PortfolioQuery {
  limit: number;
  after?: string;
}

/** `limit` (1–100, default 50) and `cursor`; either one bad is INVALID_PARAMETER naming it. */
export function portfolioQueryOf(req: Request): PortfolioQuery {
  const cursor = singleQueryParameter(req, 'cursor');
  return { limit: pageLimitOf(req, PORTFOLIO_LIMIT), after: cursor === undefined ? undefined : clientIdOfCursor(cursor) };
}

/** Opaque to clients, versioned so its form can change: the Client ID the page ended at. */
export function cursorAfter(clientId: string): string {
  return opaqueCursor(`v1:${clientId}`);
}

function clientIdOfCursor(cursor: string): string {
  return cursorParts(cursor, /^v1:([a-z][a-z0-9]{0,15}_[A-Za-z0-9]{16,64})$/, ['clientId'], { maxLength: 128 }).clientId;
}
