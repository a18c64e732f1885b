import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, RequestHandler, Response, Router } from 'express';
import { ApiError, type Logger } from '@rsd/platform';
import type { CredentialsApi, ExportFormat } from '../credentials-api';
import type { ConsoleSession } from './console-sessions';
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
      // The browser leaving ends the API's read too: nothing is read that no one will take.
      const left = new AbortController();
      res.on('close', () => left.abort());
      const exported = await api.exportAuditLog(session, apiQueryOf(req, filtersOf(req), ['cursor']), format, left.signal);
      res.status(200);
      res.setHeader('Content-Type', exported.contentType);
      res.setHeader('Content-Disposition', `attachment; filename="audit-log-${fileNameOf(session.organizationId)}.${format}"`);
      deps.log.info({ organizationId: session.organizationId, subject: session.subject, format }, 'console: audit log downloaded');
      try {
        // Backpressure end to end: the API's body is read only as fast as the browser takes it.
        await pipeline(Readable.fromWeb(exported.body), res);
      } catch (error) {
        // The browser left, or the API's body broke off: the download can only be cut short now.
        if (!left.signal.aborted)
          deps.log.warn({ err: error, organizationId: session.organizationId }, 'console: audit log download cut short');
        res.destroy();
      }
    });
  }
}

function firstOf(value: unknown): string {
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

/** An organization's id as a file name: letters, digits, `.`, `_` and `-`, the rest `_`. */
function fileNameOf(organizationId: string): string {
  return organizationId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || 'organization';
}
