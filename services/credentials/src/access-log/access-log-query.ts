import type { Request } from 'express';
import { ACCESS_LOG_LIMIT, utcInstantSchema } from '@rsd/contracts';
import type { AccessLogPosition } from '@rsd/domain';
import { ApiError } from '@rsd/platform';

/** A page of the access log (decision 21): how many, and after which entry. */
export interface AccessLogQuery {
  limit: number;
  after?: AccessLogPosition;
}

/** `limit` and `cursor` from the query; a bad one is INVALID_PARAMETER naming it, a repeated one too. */
export function accessLogQueryOf(req: Request): AccessLogQuery {
  const cursor = single(req, 'cursor');
  return { limit: limitOf(req), ...(cursor === undefined ? {} : { after: positionOfCursor(cursor) }) };
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

function single(req: Request, name: string): string | undefined {
  const raw: unknown = req.query[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw new ApiError('INVALID_PARAMETER', `${name} must be given once`);
  return raw;
}

/** A whole number from 1 to 500 written plainly. */
function limitOf(req: Request): number {
  const raw = single(req, 'limit');
  if (raw === undefined) return ACCESS_LOG_LIMIT.default;
  const limit = /^[1-9][0-9]{0,2}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit >= ACCESS_LOG_LIMIT.min && limit <= ACCESS_LOG_LIMIT.max)) {
    throw new ApiError('INVALID_PARAMETER', `limit must be a whole number from ${ACCESS_LOG_LIMIT.min} to ${ACCESS_LOG_LIMIT.max}`);
  }
  return limit;
}
