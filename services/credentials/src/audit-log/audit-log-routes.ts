import type { Router } from 'express';
import type { AuditLogEntry } from '@rsd/contracts';
import { labelledRouter } from '@rsd/observability';
import { answerLog, answerOtherMethods, fieldColumns, type Column, type TokenVerifier } from '@rsd/platform';
import type { AuditFilter, AuditLogStore, AuditPosition } from '@rsd/ports';
import { organizationCallers } from '../authorizations/authorization-routes';
import { AUDIT_LOG_CURSOR, auditLogQueryOf } from './audit-log-query';

export interface AuditLogRoutesDeps {
  auditLog: Pick<AuditLogStore, 'page'>;
  verifyToken: TokenVerifier;
}

export const AUDIT_LOG_PATH = '/organizations/:organizationId/audit-log';

/** The CSV export's columns: the entry's fields, the actor's three apart. */
export const AUDIT_LOG_COLUMNS: readonly Column<AuditLogEntry>[] = [
  ...fieldColumns<AuditLogEntry>('at', 'action'),
  { header: 'actorType', cell: (entry) => entry.actor.type },
  { header: 'actorId', cell: (entry) => entry.actor.id },
  { header: 'actorVia', cell: (entry) => entry.actor.via },
  ...fieldColumns<AuditLogEntry>('requestId', 'address', 'clientId'),
];

/**
 * Decision 54: `GET /v1/organizations/{organizationId}/audit-log`, newest first, filtered; JSON pages,
 * or the whole (filtered) trail as CSV or NDJSON streamed from the store page by page.
 */
export function auditLogRoutes(deps: AuditLogRoutesDeps): Router {
  const router = labelledRouter();
  router.route(AUDIT_LOG_PATH).get(...organizationCallers(deps.verifyToken).reader, async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const query = auditLogQueryOf(req);
    const filter: AuditFilter = { organizationId: req.params.organizationId, ...query.filter };
    const log = {
      read: (limit: number, after: AuditPosition | undefined) =>
        deps.auditLog.page(filter, { limit, ...(after ? { after: { at: after.at, eventId: after.eventId } } : {}) }),
      entryOf,
      cursorAfter: AUDIT_LOG_CURSOR.write,
      columns: AUDIT_LOG_COLUMNS,
      filename: `audit-log-${req.params.organizationId}`,
    };
    await answerLog(req, res, log, query);
  });
  return answerOtherMethods(router);
}

function entryOf({ at, action, actor, requestId, address, clientId }: AuditLogEntry): AuditLogEntry {
  return { at, action, actor: { ...actor }, requestId, address, clientId };
}
