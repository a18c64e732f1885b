import type { Request, Response } from 'express';
import type { AccessLogEntry, AccessRecord } from '@rsd/contracts';
import type { AccessLogStore, AuthorizationStore } from '@rsd/ports';
import { findOwnAuthorization } from '../authorizations/find-authorizations';
import { answerLog, fieldColumns } from '@rsd/platform';
import { ACCESS_LOG_CURSOR, type AccessLogQuery } from './access-log-query';

export interface AccessLogDeps {
  store: AuthorizationStore;
  accessLog: Pick<AccessLogStore, 'page'>;
}

/**
 * Decision 21: who read through this authorization, newest first, as a JSON page or (decision 54) the
 * whole filtered log as CSV or NDJSON streamed from the store a page at a time (from `cursor` when
 * given). The authorization must be the organization's own (404 otherwise, as for GET of it).
 */
export async function answerAccessLog(
  deps: AccessLogDeps,
  req: Request,
  res: Response,
  { organizationId, clientId }: { organizationId: string; clientId: string },
  query: AccessLogQuery,
): Promise<void> {
  await findOwnAuthorization(deps.store, organizationId, clientId);
  const log = {
    read: (limit: number, after: AccessLogQuery['after']) =>
      deps.accessLog.page(clientId, { limit, filter: query.filter, ...(after ? { after } : {}) }),
    entryOf: accessLogEntryOf,
    cursorAfter: ACCESS_LOG_CURSOR.write,
    columns: ACCESS_LOG_COLUMNS,
    filename: `access-log-${clientId}`,
  };
  await answerLog(req, res, log, query);
}

/** What the organization sees of a record: no id of the record's own, no Client ID (the path names it). */
export function accessLogEntryOf({ at, resource, status, code, clientAddress, requestId, certificate }: AccessRecord): AccessLogEntry {
  return { at, resource, status, code, clientAddress, requestId, ...(certificate ? { certificate } : {}) };
}

/** The CSV export's columns (decision 54), the entry's fields in order. */
export const ACCESS_LOG_COLUMNS = fieldColumns<AccessRecord>('at', 'resource', 'status', 'code', 'clientAddress', 'requestId');
