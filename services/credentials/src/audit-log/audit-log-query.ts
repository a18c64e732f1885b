import type { Request } from 'express';
import { AUDIT_LOG_LIMIT, auditActionSchema, clientIdSchema, instantInputSchema, utcInstantSchema } from '@rsd/contracts';
import { ApiError, pageLimitOf, singleQueryParameter } from '@rsd/platform';
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
  const from = instantOf(req, 'from');
  const to = instantOf(req, 'to');
  if (from !== undefined && to !== undefined && from >= to) throw new ApiError('INVALID_PARAMETER', 'from must be before to');
  const actor = singleQueryParameter(req, 'actor');
  if (actor !== undefined && !/^[ -~]{1,512}$/.test(actor)) {
    throw new ApiError('INVALID_PARAMETER', 'actor must be an actor id (1-512 printable characters) or an actor type');
  }
  const action = singleQueryParameter(req, 'action');
  if (action !== undefined && !auditActionSchema.safeParse(action).success) {
    throw new ApiError('INVALID_PARAMETER', `action must be one of ${auditActionSchema.options.join(', ')}`);
  }
  const clientId = singleQueryParameter(req, 'clientId');
  if (clientId !== undefined && !clientIdSchema.safeParse(clientId).success)
    throw new ApiError('INVALID_PARAMETER', 'clientId is not a Client ID');
  const cursor = singleQueryParameter(req, 'cursor');
  return {
    filter: {
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
      ...(actor === undefined ? {} : { actor }),
      ...(action === undefined ? {} : { action }),
      ...(clientId === undefined ? {} : { clientId }),
    },
    limit: pageLimitOf(req, AUDIT_LOG_LIMIT),
    ...(cursor === undefined ? {} : { after: positionOfCursor(cursor) }),
  };
}

/** An instant parameter, in UTC with milliseconds as the entries' `at`. */
export function instantOf(req: Request, name: string): string | undefined {
  const raw = singleQueryParameter(req, name);
  if (raw === undefined) return undefined;
  if (!instantInputSchema.safeParse(raw).success) {
    throw new ApiError('INVALID_PARAMETER', `${name} must be an ISO 8601 instant with an offset, such as 2026-11-21T08:00:00Z`);
  }
  return new Date(raw).toISOString();
}

/** Opaque to callers: the versioned position of the page's last entry (its instant and event id). */
export function auditCursorAfter({ at, eventId }: AuditPosition): string {
  return Buffer.from(`a1|${at}|${eventId}`, 'utf8').toString('base64url');
}

const CURSOR = /^a1\|([^|]+)\|([A-Za-z0-9._:-]{1,128})$/;

function positionOfCursor(cursor: string): AuditPosition {
  const decoded = /^[A-Za-z0-9_-]{1,400}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const [, at, eventId] = CURSOR.exec(decoded) ?? [];
  if (at === undefined || eventId === undefined || !utcInstantSchema.safeParse(at).success) throw badCursor();
  const position = { at, eventId };
  if (auditCursorAfter(position) !== cursor) throw badCursor();
  return position;
}

const badCursor = () => new ApiError('INVALID_PARAMETER', 'cursor is not one this API returned as nextCursor');
