import type { Request } from 'express';
import { ACCESS_LOG_LIMIT, utcInstantSchema } from '@rsd/contracts';
import type { AccessLogPosition } from '@rsd/domain';
import { ApiError, pageLimitOf, singleQueryParameter } from '@rsd/platform';

/** A page of the access log (decision 21): how many, and after which entry. */
export interface AccessLogQuery {
  limit: number;
  after?: AccessLogPosition;
}

/** `limit` and `cursor` from the query; a bad one is INVALID_PARAMETER naming it, a repeated one too. */
export function accessLogQueryOf(req: Request): AccessLogQuery {
  const cursor = singleQueryParameter(req, 'cursor');
  return { limit: pageLimitOf(req, ACCESS_LOG_LIMIT), ...(cursor === undefined ? {} : { after: positionOfCursor(cursor) }) };
}

/**
 * Opaque to callers: the versioned position of the page's last entry (its instant, request id and
 * record id), so the next page starts strictly after it whatever arrives meanwhile.
 */
export function cursorAfter({ at, requestId, id }: AccessLogPosition): string {
  return Buffer.from(`v1|${at}|${requestId}|${id}`, 'utf8').toString('base64url');
}

const CURSOR = /^v1\|([^|]+)\|([A-Za-z0-9._-]{1,128})\|([A-Za-z0-9-]{1,64})$/;

function positionOfCursor(cursor: string): AccessLogPosition {
  const decoded = /^[A-Za-z0-9_-]{1,400}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const [, at, requestId, id] = CURSOR.exec(decoded) ?? [];
  if (at === undefined || requestId === undefined || id === undefined || !utcInstantSchema.safeParse(at).success) throw badCursor();
  const position = { at, requestId, id };
  if (cursorAfter(position) !== cursor) throw badCursor();
  return position;
}

const badCursor = () => new ApiError('INVALID_PARAMETER', 'cursor is not one this API returned as nextCursor');
