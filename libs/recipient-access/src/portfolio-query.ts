import type { Request } from 'express';
import { PORTFOLIO_LIMIT } from '@rsd/contracts';
import { ApiError, pageLimitOf, singleQueryParameter } from '@rsd/platform';

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
  return Buffer.from(`v1:${clientId}`, 'utf8').toString('base64url');
}

const CLIENT_ID_IN_CURSOR = /^[a-z][a-z0-9]{0,15}_[A-Za-z0-9]{16,64}$/;

function clientIdOfCursor(cursor: string): string {
  const decoded = /^[A-Za-z0-9_-]{1,128}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const clientId = decoded.startsWith('v1:') ? decoded.slice(3) : '';
  if (!CLIENT_ID_IN_CURSOR.test(clientId) || cursorAfter(clientId) !== cursor) {
    throw new ApiError('INVALID_PARAMETER', 'cursor is not one this API returned as nextCursor');
  }
  return clientId;
}
