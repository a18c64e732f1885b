import type { Request, RequestHandler, Response, Router } from 'express';
import { ApiError, type Logger } from '@rsd/platform';
import type { CredentialsApi, ExportFormat } from '../credentials-api';
import type { ConsoleSession } from './console-sessions';
import { fileNameOf, passOnDownload } from './downloads';
import { apiInstant, AUDIT_FILTERS, AUDIT_LOG_PATH, auditLogPage, type AuditFilters } from './audit-log-pages';
import type { Html } from './html';
import type { Viewer } from './pages';

export interface AuditLogRouteDeps {
  api: CredentialsApi;
  signedIn: RequestHandler;
  sessionOf: (res: Response) => ConsoleSession;
  viewerOf: (res: Response) => Viewer;
  page: (res: Response, status: number, body: Html) => void;
  log: Logger;
}

/** What the page takes besides the filters: the API's paging, passed on as asked. */
const PAGING = ['limit', 'cursor'] as const;

/**
 * Decision 54's audit trail in the console: a page of it through the credentials API with its filters
 * and cursor, and its CSV and NDJSON exports passed on to the browser as the API streams them (never
 * held whole in the console), so a download of any size costs the console a buffer's worth.
 */
export function auditLogRoutes(router: Router, deps: AuditLogRouteDeps): void {
  const { api, signedIn, sessionOf, viewerOf, page } = deps;
  const local = AUDIT_LOG_PATH.slice('/console'.length);

  router.get(local, signedIn, async (req, res) => {
    const filters = filtersOf(req);
    const limit = firstOf(req.query.limit);
    const view = { filters, olderThanFirstPage: req.query.cursor !== undefined, ...(limit ? { limit } : {}) };
    try {
      const log = await api.auditLog(sessionOf(res), apiQueryOf(req, filters, PAGING));
      page(res, 200, auditLogPage(viewerOf(res), log, view));
    } catch (error) {
      // A filter the API refuses is shown above the form, which keeps what was asked.
      if (!(error instanceof ApiError) || error.code !== 'INVALID_PARAMETER') throw error;
      page(res, 400, auditLogPage(viewerOf(res), undefined, { ...view, problem: error.message }));
    }
  });

  for (const format of ['csv', 'ndjson'] as const satisfies readonly ExportFormat[]) {
    router.get(`${local}/export.${format}`, signedIn, async (req, res) => {
      const session = sessionOf(res);
      await passOnDownload(
        res,
        {
          filename: `audit-log-${fileNameOf(session.organizationId, 'organization')}.${format}`,
          what: 'audit log',
          log: deps.log,
          logged: { organizationId: session.organizationId, subject: session.subject, format },
        },
        (signal) => api.exportAuditLog(session, apiQueryOf(req, filtersOf(req), ['cursor']), format, signal),
      );
    });
  }
}

export function firstOf(value: unknown): string {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : '';
}

/** The filters as the page was asked them (the date-time fields' values, blanks included): what its links carry on. */
function filtersOf(req: Request): AuditFilters {
  return Object.fromEntries(AUDIT_FILTERS.map((name) => [name, firstOf(req.query[name]).trim()])) as AuditFilters;
}

/**
 * The API's query: each filter given, the times as instants (UTC), and `passed` as often as asked (a
 * repeated `limit` stays repeated, for the API to refuse by name).
 */
function apiQueryOf(req: Request, filters: AuditFilters, passed: readonly string[]): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of AUDIT_FILTERS) {
    const value = filters[name];
    if (value) query.set(name, name === 'from' || name === 'to' ? apiInstant(value) : value);
  }
  for (const [name, value] of passedOn(req, passed)) query.append(name, value);
  return query;
}

/** The query's `names`, each as often as given: the API refuses a repeated one by name. */
export function passedOn(req: Request, names: readonly string[]): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of names) {
    const value: unknown = req.query[name];
    for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) query.append(name, String(item));
  }
  return query;
}
