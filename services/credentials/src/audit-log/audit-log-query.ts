import type { Request } from 'express';
import { AUDIT_LOG_LIMIT, auditActionSchema, clientIdSchema, utcInstantSchema } from '@rsd/contracts';
import { ApiError, cursorParts, instantRangeOf, opaqueCursor, pageLimitOf, parsedParameter, singleQueryParameter } from '@rsd/platform';
import type { AuditFilter, AuditPosition } from '@rsd/ports';

/** A page of the audit trail (decision 54): its filters, how many, and after which entry. */
export interface AuditLogQuery {
  filter: Omit<AuditFilter, 'organizationId'>;
  limit: number;
  after?: AuditPosition;
}

/**
 * The query's filters, `limit` and `cursor`; each bad one is INVALID_PARAMETER naming it, a repeated
 * one too. `from` and `to` are instants with an offset (written back in UTC), `from` before `to`.
 */
export function auditLogQueryOf(req: Request): AuditLogQuery {
  const range = instantRangeOf(req);
  const actor = singleQueryParameter(req, 'actor');
  if (actor !== undefined && !/^[ -~]{1,512}$/.test(actor)) {
    throw new ApiError('INVALID_PARAMETER', 'actor must be an actor id (1-512 printable characters) or an actor type');
  }
  const action = parsedParameter(req, 'action', auditActionSchema, `action must be one of ${auditActionSchema.options.join(', ')}`);
  const clientId = parsedParameter(req, 'clientId', clientIdSchema, 'clientId is not a Client ID');
  const cursor = singleQueryParameter(req, 'cursor');
  return {
    filter: {
      ...range,
      ...(actor === undefined ? {} : { actor }),
      ...(action === undefined ? {} : { action }),
      ...(clientId === undefined ? {} : { clientId }),
    },
    limit: pageLimitOf(req, AUDIT_LOG_LIMIT),
    ...(cursor === undefined ? {} : { after: positionOfCursor(cursor) }),
  };
}

/** Opaque to callers: the versioned position of the page's last entry (its instant and event id). */
export function auditCursorAfter({ at, eventId }: AuditPosition): string {
  return opaqueCursor(`a1|${at}|${eventId}`);
}

function positionOfCursor(cursor: string): AuditPosition {
  return cursorParts(cursor, /^a1\|([^|]+)\|([A-Za-z0-9._:-]{1,128})$/, ['at', 'eventId'], {
    valid: ({ at }) => utcInstantSchema.safeParse(at).success,
  });
}
