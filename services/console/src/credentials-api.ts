import type {
  AccessLogPage,
  AccessReviewPage,
  AccessReviewSummary,
  SignedAccessReviewReport,
  Alert,
  AuditLogPage,
  Authorization,
  AuthorizationWithClaimLink,
  CreatedAuthorization,
  DailyReadsList,
  RotatedAuthorization,
} from '@rsd/contracts';
import { traceContextHeaders } from '@rsd/observability';
import {
  ApiError,
  CONSOLE_AUDIENCES,
  ERROR_STATUS,
  serviceUnavailable,
  type ConsoleSigner,
  type ErrorCode,
  type Logger,
} from '@rsd/platform';
import type { ConsoleIdentity } from './console/console-sessions';

/** What the credentials service answered, as the claim page relays it to a program. */
export interface RelayedAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

/**
 * The credentials service's API as the console uses it (decision 51): every call over HTTP with a
 * minute's token of the console naming the signed-in person. A refusal of the API becomes the console's
 * error of the same code (its page says it); an API that cannot be reached, or refuses the console's own
 * token (its public key not configured there), is a 503 page.
 */
export interface CredentialsApi {
  list(person: ConsoleIdentity): Promise<Authorization[]>;
  alerts(person: ConsoleIdentity): Promise<Alert[]>;
  get(person: ConsoleIdentity, clientId: string): Promise<Authorization>;
  create(
    person: ConsoleIdentity,
    body: Record<string, unknown>,
  ): Promise<CreatedAuthorization | AuthorizationWithClaimLink | Authorization>;
  revoke(person: ConsoleIdentity, clientId: string): Promise<Authorization>;
  rotate(
    person: ConsoleIdentity,
    clientId: string,
    body: { overlapSeconds: number },
  ): Promise<{ rotated: RotatedAuthorization; pending: boolean }>;
  claimLink(person: ConsoleIdentity, clientId: string, body: Record<string, unknown>): Promise<AuthorizationWithClaimLink>;
  /** `query` as the page was asked it (a repeated `limit` stays repeated, for the API to refuse). */
  accessLog(person: ConsoleIdentity, clientId: string, query: URLSearchParams): Promise<AccessLogPage>;
  dailyReads(person: ConsoleIdentity, clientId: string): Promise<DailyReadsList['days']>;
  /** Decision 54's audit trail, one page; `query` as for the access log (the filters, `limit`, `cursor`). */
  auditLog(person: ConsoleIdentity, query: URLSearchParams): Promise<AuditLogPage>;
  /**
   * The audit trail's export as the API streams it (CSV or NDJSON, every entry the filters match), for the
   * console to pass on as it arrives. `signal` ends the read (the browser left); the API's answer must
   * start within the usual timeout, but its body may take as long as it takes.
   */
  exportAuditLog(person: ConsoleIdentity, query: URLSearchParams, format: ExportFormat, signal: AbortSignal): Promise<ExportStream>;
  /** Decision 54's access reviews, one page, newest first; `query` the paging as asked (`limit`, `cursor`). */
  accessReviews(person: ConsoleIdentity, query: URLSearchParams): Promise<AccessReviewPage>;
  startAccessReview(person: ConsoleIdentity, body: Record<string, unknown>): Promise<AccessReviewSummary>;
  /**
   * A review's report, signed: the review's page shows it (it alone has each grant's last use and reads in
   * the period). Its downloads are `exportAccessReviewReport`, the API's bytes as they come.
   */
  accessReviewReport(person: ConsoleIdentity, reviewId: string): Promise<SignedAccessReviewReport>;
  decideAccessReviewItem(person: ConsoleIdentity, reviewId: string, clientId: string, body: Record<string, unknown>): Promise<void>;
  /** The report as the API answers it: CSV, or the signed JSON (`{ report, jws }`) byte for byte. */
  exportAccessReviewReport(person: ConsoleIdentity, reviewId: string, format: ReportFormat, signal: AbortSignal): Promise<ExportStream>;
  /** Decision 38's claim API, for the browser at `address` (the console vouches for it in a token of its own). */
  claim(method: 'GET' | 'POST', token: string, request: { address: string; body?: unknown; accountKey?: string }): Promise<RelayedAnswer>;
}

/** The audit trail's exports, by the media type the API answers them in. */
export const EXPORT_TYPES = { csv: 'text/csv', ndjson: 'application/x-ndjson' } as const;
export type ExportFormat = keyof typeof EXPORT_TYPES;

/** An access review's report, by the media type the API answers it in. */
export const REPORT_TYPES = { csv: 'text/csv', json: 'application/json' } as const;
export type ReportFormat = keyof typeof REPORT_TYPES;

export interface ExportStream {
  contentType: string;
  body: ReadableStream<Uint8Array>;
}

export function credentialsApi(options: { url: string; signer: ConsoleSigner; log: Logger; timeoutMs?: number }): CredentialsApi {
  const base = options.url.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;

  async function send(
    path: string,
    init: { method?: string; body?: unknown; authorization: string; headers?: Record<string, string>; signal?: AbortSignal },
  ) {
    try {
      return await fetch(`${base}${path}`, {
        method: init.method ?? 'GET',
        headers: {
          accept: 'application/json',
          authorization: `Bearer ${init.authorization}`,
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...traceContextHeaders(),
          ...init.headers,
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        redirect: 'manual',
        signal: init.signal ?? AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      options.log.warn({ err: error }, 'console: the credentials service could not be reached');
      throw serviceUnavailable('The credentials service cannot be reached; try again in a moment.', { cause: error });
    }
  }

  /** A request to the organization's part of the API, with a token of the console naming the person. */
  async function asPerson(
    person: ConsoleIdentity,
    path: string,
    init: { method?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const token = await personToken(options.signer, 'credentials', person);
    return send(`/v1/organizations/${encodeURIComponent(person.organizationId)}${path}`, { ...init, authorization: token });
  }

  async function call<T>(
    person: ConsoleIdentity,
    path: string,
    init: { method?: string; body?: unknown } = {},
  ): Promise<{ status: number; body: T }> {
    const response = await asPerson(person, path, init);
    const body: unknown = await response.json().catch(() => undefined);
    if (response.ok) return { status: response.status, body: body as T };
    throw consoleErrorOf(response, body, options.log);
  }

  /**
   * A download as the API streams it, for the console to pass on as it arrives. The usual timeout until
   * the answer starts; then only `signal` (the browser leaving) ends the read.
   */
  async function stream(person: ConsoleIdentity, path: string, accept: string, signal: AbortSignal): Promise<ExportStream> {
    const started = new AbortController();
    const timer = setTimeout(() => started.abort(new Error('the credentials service did not answer in time')), timeoutMs);
    try {
      const response = await asPerson(person, path, { headers: { accept }, signal: AbortSignal.any([started.signal, signal]) });
      const contentType = response.headers.get('content-type') ?? '';
      if (response.ok && response.body && contentType.startsWith(accept)) return { contentType, body: response.body };
      const body: unknown = await response.json().catch(() => undefined);
      throw consoleErrorOf(response.ok ? { status: 502, headers: response.headers } : response, body, options.log);
    } finally {
      clearTimeout(timer);
    }
  }

  const item = (clientId: string) => `/authorizations/${encodeURIComponent(clientId)}`;
  const review = (reviewId: string) => `/access-reviews/${encodeURIComponent(reviewId)}`;
  return {
    list: async (person) => (await call<{ authorizations: Authorization[] }>(person, '/authorizations')).body.authorizations,
    alerts: async (person) => (await call<{ alerts: Alert[] }>(person, '/alerts')).body.alerts,
    get: async (person, clientId) => (await call<Authorization>(person, item(clientId))).body,
    create: async (person, body) => (await call<CreatedAuthorization>(person, '/authorizations', { method: 'POST', body })).body,
    revoke: async (person, clientId) => (await call<Authorization>(person, `${item(clientId)}/revoke`, { method: 'POST' })).body,
    rotate: async (person, clientId, body) => {
      const answer = await call<RotatedAuthorization>(person, `${item(clientId)}/rotate`, { method: 'POST', body });
      // 202: recorded, its event not yet in the log (decision 29).
      return { rotated: answer.body, pending: answer.status === 202 };
    },
    claimLink: async (person, clientId, body) =>
      (await call<AuthorizationWithClaimLink>(person, `${item(clientId)}/claim-link`, { method: 'POST', body })).body,
    accessLog: async (person, clientId, query) =>
      (await call<AccessLogPage>(person, withQuery(`${item(clientId)}/access-log`, query))).body,
    dailyReads: async (person, clientId) => (await call<DailyReadsList>(person, `${item(clientId)}/daily-reads`)).body.days,
    auditLog: async (person, query) => (await call<AuditLogPage>(person, withQuery('/audit-log', query))).body,
    exportAuditLog: (person, query, format, signal) => stream(person, withQuery('/audit-log', query), EXPORT_TYPES[format], signal),
    accessReviews: async (person, query) => (await call<AccessReviewPage>(person, withQuery('/access-reviews', query))).body,
    startAccessReview: async (person, body) => (await call<AccessReviewSummary>(person, '/access-reviews', { method: 'POST', body })).body,
    accessReviewReport: async (person, reviewId) => (await call<SignedAccessReviewReport>(person, `${review(reviewId)}/report`)).body,
    decideAccessReviewItem: async (person, reviewId, clientId, body) => {
      await call(person, `${review(reviewId)}/items/${encodeURIComponent(clientId)}`, { method: 'PUT', body });
    },
    exportAccessReviewReport: (person, reviewId, format, signal) =>
      stream(person, `${review(reviewId)}/report`, REPORT_TYPES[format], signal),
    async claim(method, token, request) {
      const response = await send(`/claim/${encodeURIComponent(token)}`, {
        method,
        authorization: await options.signer.signClientAddress(request.address),
        ...(method === 'POST' ? { body: request.body ?? {} } : {}),
        ...(request.accountKey === undefined ? {} : { headers: { 'x-api-key': request.accountKey } }),
      });
      const body: unknown = await response.json().catch(() => undefined);
      return { status: response.status, headers: response.headers, body };
    },
  };
}

/** Decision 51: a minute's token of the console naming the signed-in person, for the API of `audience`. */
export function personToken(signer: ConsoleSigner, audience: keyof typeof CONSOLE_AUDIENCES, person: ConsoleIdentity): Promise<string> {
  return signer.sign(CONSOLE_AUDIENCES[audience], {
    organizationId: person.organizationId,
    subject: person.subject,
    personIssuer: person.issuer,
    scope: person.scope,
  });
}

function withQuery(path: string, query: URLSearchParams): string {
  const search = query.toString();
  return search ? `${path}?${search}` : path;
}

/** The API's refusal as the console's own error, in the API's words; what is not the person's doing is a 503. */
export function consoleErrorOf(response: { status: number; headers: Headers }, body: unknown, log: Logger): ApiError {
  const error = (typeof body === 'object' && body !== null ? body : {}) as { code?: unknown; message?: unknown; details?: unknown };
  if (response.status === 401) {
    // The console's own token refused: a configuration to mend (the API lacks the console's public key), never the person's doing.
    log.error(
      { status: response.status, code: error.code },
      'console: the credentials service refused the console token (check CONSOLE_JWKS_URL there)',
    );
    return serviceUnavailable('The console cannot reach the organization’s authorizations right now.');
  }
  const retryAfter = response.headers.get('retry-after');
  if (response.status === 429) {
    // The browser's own budget (failed claim attempts), or the organization's: the person waits, as an API client would.
    const seconds = retryAfter ?? '60';
    return new ApiError('RATE_LIMITED', `Too many attempts; try again in ${seconds} seconds.`, undefined, { 'Retry-After': seconds });
  }
  if (response.status === 503) {
    // The API's own dependency is away: the person retries, and the page names nothing of it.
    return serviceUnavailable(
      'A service the console needs is not reachable right now.',
      retryAfter === null ? {} : { retryAfterS: Number(retryAfter) || undefined },
    );
  }
  // A code the API documents, with its status: the same error here (a 500 stays a 500, a 503 keeps its Retry-After).
  const known = typeof error.code === 'string' && error.code in ERROR_STATUS && ERROR_STATUS[error.code as ErrorCode] === response.status;
  if (!known) {
    log.warn({ status: response.status, code: error.code }, 'console: the credentials service did not complete a request');
    return serviceUnavailable('The credentials service could not complete this request; try again in a moment.');
  }
  const details = Array.isArray(error.details)
    ? (error.details as { path?: unknown; message?: unknown }[]).map((detail) => ({
        path: typeof detail.path === 'string' ? detail.path : '',
        message: typeof detail.message === 'string' ? detail.message : '',
      }))
    : [];
  return new ApiError(
    error.code as ErrorCode,
    typeof error.message === 'string' ? error.message : 'The request was refused',
    details.length > 0 ? details : undefined,
    retryAfter === null ? undefined : { 'Retry-After': retryAfter },
  );
}
