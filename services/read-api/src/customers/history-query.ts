import type { Request } from 'express';
import { HISTORY_LIMIT, isoDateSchema } from '@rsd/contracts';
import { ApiError, pageLimitOf, singleQueryParameter } from '@rsd/platform';

/** A history request's range and page (decision 25); dates are inclusive `YYYY-MM-DD`. */
export interface HistoryQuery {
  from?: string;
  to?: string;
  limit: number;
  /** The scoreDate the previous page ended at: this page holds only older snapshots. */
  after?: string;
}

/** `from`, `to`, `limit` and `cursor` from the query; any bad one is INVALID_PARAMETER naming it. */
export function historyQueryOf(req: Request): HistoryQuery {
  const from = dateParameter(req, 'from');
  const to = dateParameter(req, 'to');
  if (from !== undefined && to !== undefined && from > to) throw new ApiError('INVALID_PARAMETER', 'from must not be after to');
  const cursor = singleQueryParameter(req, 'cursor');
  return { from, to, limit: pageLimitOf(req, HISTORY_LIMIT), after: cursor === undefined ? undefined : dateOfCursor(cursor) };
}

/** The cursor is opaque to clients: a versioned, encoded scoreDate, so its form can change later. */
export function cursorAfter(scoreDate: string): string {
  return Buffer.from(`v1:${scoreDate}`, 'utf8').toString('base64url');
}

function dateOfCursor(cursor: string): string {
  const decoded = /^[A-Za-z0-9_-]{1,64}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const date = decoded.startsWith('v1:') ? decoded.slice(3) : '';
  if (!isoDateSchema.safeParse(date).success || cursorAfter(date) !== cursor) {
    throw new ApiError('INVALID_PARAMETER', 'cursor is not one this API returned as nextCursor');
  }
  return date;
}

function dateParameter(req: Request, name: 'from' | 'to'): string | undefined {
  const raw = singleQueryParameter(req, name);
  if (raw === undefined) return undefined;
  if (!isoDateSchema.safeParse(raw).success) throw new ApiError('INVALID_PARAMETER', `${name} must be a calendar date YYYY-MM-DD`);
  return raw;
}
