import type { Request } from 'express';
import { ACCESS_LOG_LIMIT, ACCESS_RESOURCES, accessResourceSchema, utcInstantSchema } from '@rsd/contracts';
import type { AccessLogPosition } from '@rsd/domain';
import { ApiError, cursorParts, instantRangeOf, opaqueCursor, pageLimitOf, parsedParameter, singleQueryParameter } from '@rsd/platform';
import type { AccessLogFilter } from '@rsd/ports';

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
  const range = instantRangeOf(req);
  const status = statusOf(singleQueryParameter(req, 'status'));
  const address = singleQueryParameter(req, 'address');
  if (address !== undefined && !/^[0-9A-Fa-f.:]{2,64}$/.test(address)) {
    throw new ApiError('INVALID_PARAMETER', 'address must be an IPv4 or IPv6 address as the entries show it');
  }
  const resource = parsedParameter(req, 'resource', accessResourceSchema, `resource must be one of ${ACCESS_RESOURCES.join(', ')}`);
  return {
    limit: pageLimitOf(req, ACCESS_LOG_LIMIT),
    ...(cursor === undefined ? {} : { after: positionOfCursor(cursor) }),
    filter: {
      ...range,
      ...(status === undefined ? {} : { status }),
      ...(address === undefined ? {} : { address }),
      ...(resource === undefined ? {} : { resource }),
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
  return opaqueCursor(`v1|${at}|${requestId}|${id}`);
}

function positionOfCursor(cursor: string): AccessLogPosition {
  return cursorParts(cursor, /^v1\|([^|]+)\|([A-Za-z0-9._-]{1,128})\|([A-Za-z0-9-]{1,64})$/, ['at', 'requestId', 'id'], {
    valid: ({ at }) => utcInstantSchema.safeParse(at).success,
  });
}
