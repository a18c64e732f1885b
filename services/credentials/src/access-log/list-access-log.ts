import type { Response } from 'express';
import type { AccessLogEntry, AccessLogPage, AccessRecord } from '@rsd/contracts';
import type { AccessLogStore, AuthorizationStore } from '@rsd/ports';
import { findOwnAuthorization } from '../authorizations/find-authorizations';
import { EXPORT_PAGE_SIZE, fieldColumns, pageOf, streamExport } from '@rsd/platform';
import { cursorAfter, type AccessLogQuery } from './access-log-query';

export interface AccessLogDeps {
  store: AuthorizationStore;
  accessLog: Pick<AccessLogStore, 'page'>;
}

/**
 * Decision 21: who read through this authorization, newest first. The authorization must be the
 * organization's own (404 otherwise, as for GET of it); one entry more than the page says whether
 * another page follows.
 */
export async function listAccessLog(
  deps: AccessLogDeps,
  organizationId: string,
  clientId: string,
  query: AccessLogQuery,
): Promise<AccessLogPage> {
  await findOwnAuthorization(deps.store, organizationId, clientId);
  const found = await deps.accessLog.page(clientId, {
    limit: query.limit + 1,
    filter: query.filter,
    ...(query.after ? { after: query.after } : {}),
  });
  const { items, next } = pageOf(found, query.limit);
  return { items: items.map(accessLogEntryOf), nextCursor: next ? cursorAfter(next) : null };
}

/** What the organization sees of a record: no id of the record's own, no Client ID (the path names it). */
export function accessLogEntryOf({ at, resource, status, code, clientAddress, requestId, certificate }: AccessRecord): AccessLogEntry {
  return { at, resource, status, code, clientAddress, requestId, ...(certificate ? { certificate } : {}) };
}

/** The CSV export's columns (decision 54), the entry's fields in order. */
export const ACCESS_LOG_COLUMNS = fieldColumns<AccessRecord>('at', 'resource', 'status', 'code', 'clientAddress', 'requestId');

/**
 * Decision 54: the whole filtered access log of one authorization as CSV or NDJSON, streamed from the
 * store a page at a time (from `cursor` when given); the authorization must be the organization's own.
 */
export async function exportAccessLog(
  deps: AccessLogDeps,
  res: Response,
  format: 'csv' | 'ndjson',
  target: { organizationId: string; clientId: string },
  query: AccessLogQuery,
): Promise<void> {
  await findOwnAuthorization(deps.store, target.organizationId, target.clientId);
  await streamExport<AccessRecord>(res, format, {
    columns: ACCESS_LOG_COLUMNS,
    line: accessLogEntryOf,
    filename: `access-log-${target.clientId}`,
    read: (last) => {
      const after = last ?? query.after;
      return deps.accessLog.page(target.clientId, { limit: EXPORT_PAGE_SIZE, filter: query.filter, ...(after ? { after } : {}) });
    },
  });
}
