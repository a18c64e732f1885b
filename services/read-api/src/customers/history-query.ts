import type { Request } from 'express';
import { HISTORY_LIMIT, isoDateSchema } from '@rsd/contracts';
import { ApiError, cursorParts, opaqueCursor, pageLimitOf, singleQueryParameter } from '@rsd/platform';

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
  return opaqueCursor(`v1:${scoreDate}`);
}

function dateOfCursor(cursor: string): string {
  const valid = ({ date }: { date: string }) => isoDateSchema.safeParse(date).success;
  return cursorParts(cursor, /^v1:([\s\S]*)$/, ['date'], { maxLength: 64, valid }).date;
}

function dateParameter(req: Request, name: 'from' | 'to'): string | undefined {
  const raw = singleQueryParameter(req, name);
  if (raw === undefined) return undefined;
  if (!isoDateSchema.safeParse(raw).success) throw new ApiError('INVALID_PARAMETER', `${name} must be a calendar date YYYY-MM-DD`);
  return raw;
}
