import type { Router } from 'express';
import type { AuditLogEntry, AuditLogPage, AuditRecord } from '@rsd/contracts';
import { labelledRouter } from '@rsd/observability';
import {
  EXPORT_PAGE_SIZE,
  exportFormatOf,
  fieldColumns,
  answerOtherMethods,
  pageOf,
  streamExport,
  type Column,
  type TokenVerifier,
} from '@rsd/platform';
import type { AuditFilter, AuditLogStore } from '@rsd/ports';
import { organizationCallers } from '../authorizations/authorization-routes';
import { auditCursorAfter, auditLogQueryOf } from './audit-log-query';

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
    const format = exportFormatOf(req);
    if (format === 'json') {
      res.json(await auditLogPage(deps.auditLog, filter, query.limit, query.after));
      return;
    }
    // An export starts at the cursor when given, and runs to the end of what the filters match.
    await streamExport<AuditRecord>(res, format, {
      columns: AUDIT_LOG_COLUMNS,
      line: entryOf,
      filename: `audit-log-${req.params.organizationId}`,
      read: (last) =>
        deps.auditLog.page(filter, {
          limit: EXPORT_PAGE_SIZE,
          ...(last ? { after: { at: last.at, eventId: last.eventId } } : query.after ? { after: query.after } : {}),
        }),
    });
  });
  return answerOtherMethods(router);
}

async function auditLogPage(
  store: Pick<AuditLogStore, 'page'>,
  filter: AuditFilter,
  limit: number,
  after: Parameters<typeof auditCursorAfter>[0] | undefined,
): Promise<AuditLogPage> {
  const { items, next } = pageOf(await store.page(filter, { limit: limit + 1, ...(after ? { after } : {}) }), limit);
  return { items: items.map(entryOf), nextCursor: next ? auditCursorAfter(next) : null };
}

function entryOf({ at, action, actor, requestId, address, clientId }: AuditLogEntry): AuditLogEntry {
  return { at, action, actor: { ...actor }, requestId, address, clientId };
}
