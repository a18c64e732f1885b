import type { Request } from 'express';
import { ACCESS_LOG_LIMIT, ACCESS_RESOURCES, accessResourceSchema, utcInstantSchema } from '@rsd/contracts';
import type { AccessLogPosition } from '@rsd/domain';
import { ApiError, pageLimitOf, singleQueryParameter } from '@rsd/platform';
import type { AccessLogFilter } from '@rsd/ports';
import { instantOf } from '../audit-log/audit-log-query';

/** A page of the access log (decision 21): how many, after which entry, and (decision 54) which entries. */
export interface AccessLogQuery {
  limit: number;
  after?: AccessLogPosition;
  filter: AccessLogFilter;
}

/**
 * `limit`, `cursor` and decision 54's filters from the query: `from` and `to` (instants with an offset,
 * `from` before `to`), `status` (one status, `404`, or a class, `4xx`) and `address` (exactly as the
 * entries show it); decision 55's `resource` (one of ACCESS_RESOURCES: `certificate` lists the certificates
 * fetched). A bad one is INVALID_PARAMETER naming it, a repeated one too.
 */
export function accessLogQueryOf(req: Request): AccessLogQuery {
  const cursor = singleQueryParameter(req, 'cursor');
  const from = instantOf(req, 'from');
  const to = instantOf(req, 'to');
  if (from !== undefined && to !== undefined && from >= to) throw new ApiError('INVALID_PARAMETER', 'from must be before to');
  const status = statusOf(singleQueryParameter(req, 'status'));
  const address = singleQueryParameter(req, 'address');
  if (address !== undefined && !/^[0-9A-Fa-f.:]{2,64}$/.test(address)) {
    throw new ApiError('INVALID_PARAMETER', 'address must be an IPv4 or IPv6 address as the entries show it');
  }
  const resource = singleQueryParameter(req, 'resource');
  if (resource !== undefined && !accessResourceSchema.safeParse(resource).success) {
    throw new ApiError('INVALID_PARAMETER', `resource must be one of ${ACCESS_RESOURCES.join(', ')}`);
  }
  return {
    limit: pageLimitOf(req, ACCESS_LOG_LIMIT),
    ...(cursor === undefined ? {} : { after: positionOfCursor(cursor) }),
    filter: {
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
      ...(status === undefined ? {} : { status }),
      ...(address === undefined ? {} : { address }),
      ...(resource === undefined ? {} : { resource: accessResourceSchema.parse(resource) }),
    },
  };
}

function statusOf(raw: string | undefined): AccessLogFilter['status'] {
  if (raw === undefined) return undefined;
  const exact = /^[1-5][0-9]{2}$/.test(raw) ? Number(raw) : undefined;
  if (exact !== undefined) return { min: exact, max: exact };
  const kind = /^([1-5])xx$/.exec(raw)?.[1];
  if (kind !== undefined) return { min: Number(kind) * 100, max: Number(kind) * 100 + 99 };
  throw new ApiError('INVALID_PARAMETER', 'status must be an HTTP status (404) or a class of them (4xx)');
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
