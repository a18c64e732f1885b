import { parse as parseCookies } from 'cookie';
import express, { type Router, type Request, type RequestHandler, type Response } from 'express';
import { clientIdSchema, MAX_OVERLAP_SECONDS } from '@rsd/contracts';
import {
  ApiError,
  errorHandler,
  hasMalformedPercentEncoding,
  malformedPath,
  pageHeaders,
  serviceUnavailable,
  type ErrorAnswers,
  type Logger,
} from '@rsd/platform';
import type { CredentialsApi } from '../credentials-api';
import { CONSOLE_ASSETS } from './console-assets';
import { sameToken, type ConsoleIdentity, type ConsoleSession, type ConsoleSessions } from './console-sessions';
import { identityOf } from './console-identity';
import { CALLBACK_PATH, CONSOLE_PATH } from './console-config';
import { isLoopbackHost, type OidcSignIn } from './oidc-sign-in';
import {
  claimLinkPage,
  confirmRevokePage,
  createPage,
  detailPage,
  detailPath,
  EMPTY_CREATE_FORM,
  keyPage,
  listPage,
  problemPage,
  signInPage,
  type CreateForm,
  type FieldProblems,
  type Viewer,
} from './pages';
import type { Html } from './html';
import { problemsByField } from './page-parts';
import { labelledRouter } from '@rsd/observability';
import type { AlertWebhookAccess } from './alert-webhooks';
import { alertWebhookRoutes } from './alert-webhook-routes';
import { auditLogRoutes, passedOn } from './audit-log-routes';
import { accessReviewRoutes } from './access-review-routes';

export interface ConsoleRoutesDeps {
  /** Decision 51: the organization's authorizations, only through the credentials service's API. */
  credentials: CredentialsApi;
  sessions: ConsoleSessions;
  /** Absent: no sign-in by OpenID Connect here (the embedded runtime's one-time link still works). */
  oidc: OidcSignIn | undefined;
  claims: { organizationClaim: string; permissionsClaim: string };
  /** The console's origin as people reach it (the registered callback's), when a proxy may rewrite Host. */
  publicOrigin?: string;
  /** The organization's alert webhooks on the notifier; absent where the console reaches none. */
  alertWebhooks?: AlertWebhookAccess | undefined;
  log: Logger;
}

const SESSION_COOKIE = 'rsd_console';
const ATTEMPT_COOKIE = 'rsd_console_sign_in';
const FORM_LIMIT = '16kb';
/** The grant page's list of certificates fetched: the latest served ones. */
const CERTIFICATES_FETCHED = new URLSearchParams({ resource: 'certificate', status: '2xx', limit: '20' });

/**
 * The console (decisions 30-32): server-rendered pages, a client of the credentials service's API
 * (decision 51) for everything they show or change, on behalf of the person signed in.
 */
export function consoleRoutes(deps: ConsoleRoutesDeps): Router {
  const { sessions, credentials: api } = deps;
  const router = labelledRouter();

  // Decision 32: no script but our own file, no inline style, no framing, forms only to ourselves (every page's policy).
  router.use(pageHeaders());

  router.get('/assets/:name', (req, res, next) => {
    const asset = CONSOLE_ASSETS.get(req.params.name);
    if (!asset) return next();
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.type(asset.type).send(asset.body);
  });

  // Pages carry an organization's data, and some a key shown once: nothing is cached anywhere.
  router.use((_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });

  /**
   * The session of the request. A page view is a use: the renewed cookie records it (idle time starts
   * again). A change always follows the page of its form, so a refused one leaves the cookie as it was.
   */
  const currentSession = async (req: Request, res: Response): Promise<ConsoleSession | undefined> => {
    const found = await sessions.find(cookieOf(req, SESSION_COOKIE));
    if (found && (req.method === 'GET' || req.method === 'HEAD')) setCookie(req, res, SESSION_COOKIE, found.cookie);
    return found?.session;
  };
  const signedIn: RequestHandler = async (req, res, next) => {
    const session = await currentSession(req, res);
    if (!session) {
      res.redirect(303, '/console');
      return;
    }
    res.locals.session = session;
    next();
  };
  const forms = express.urlencoded({ extended: false, limit: FORM_LIMIT, parameterLimit: 100 });
  // Every change: a session, a same-origin request, and the session's own token in the form.
  const change: RequestHandler[] = [
    signedIn,
    forms,
    (req, res, next) => {
      const session = sessionOf(res);
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (!sameOrigin(req, deps.publicOrigin) || !sameToken(body._csrf, session.csrfToken)) {
        deps.log.warn({ organizationId: session.organizationId, path: req.path }, 'console change refused: CSRF check failed');
        page(
          res,
          403,
          problemPage(
            'Form expired',
            'This form has expired or did not come from this console. Reload the page and try again.',
            viewerOf(session),
          ),
        );
        return;
      }
      next();
    },
  ];
  const validClientId: RequestHandler = (req, _res, next) =>
    next(
      clientIdSchema.safeParse(req.params.clientId).success ? undefined : new ApiError('AUTHORIZATION_NOT_FOUND', 'No such authorization'),
    );

  router.get('/', async (req, res) => {
    const session = await currentSession(req, res);
    if (!session) return page(res, 200, signInPage({ oidc: deps.oidc !== undefined }));
    res.locals.session = session;
    const [authorizations, alerts] = await Promise.all([api.list(session), api.alerts(session)]);
    page(res, 200, listPage(viewerOf(session), authorizations, alerts));
  });

  // --- Sign-in -------------------------------------------------------------------------------------
  router.get('/sign-in', async (req, res) => {
    if (!deps.oidc) return page(res, 404, signInPage({ oidc: false }));
    const { url, attempt } = await deps.oidc.begin().catch((error: unknown) => {
      throw serviceUnavailable('The identity provider cannot be reached; try again in a moment.', { cause: error });
    });
    setCookie(req, res, ATTEMPT_COOKIE, await sessions.beginAttempt(attempt), 10 * 60);
    res.redirect(303, url.href);
  });

  router.get(CALLBACK_PATH.slice(CONSOLE_PATH.length), async (req, res) => {
    const attempt = await sessions.takeAttempt(cookieOf(req, ATTEMPT_COOKIE));
    clearCookie(req, res, ATTEMPT_COOKIE);
    if (!deps.oidc) return page(res, 404, signInPage({ oidc: false }));
    if (!attempt)
      return page(res, 400, signInPage({ oidc: true, problem: 'This sign-in has expired or was already used. Sign in again.' }));
    const queryAt = req.originalUrl.indexOf('?');
    let claims;
    try {
      claims = await deps.oidc.finish(queryAt === -1 ? '' : req.originalUrl.slice(queryAt), attempt);
    } catch (error) {
      deps.log.warn({ err: error }, 'console sign-in refused by the OpenID Connect checks');
      return page(res, 400, signInPage({ oidc: true, problem: 'The identity provider did not confirm this sign-in. Sign in again.' }));
    }
    const outcome = identityOf(claims, deps.claims);
    if (outcome.outcome === 'refused') {
      deps.log.warn({ subject: claims.sub }, 'console sign-in refused: claims do not grant the console');
      return page(res, 403, signInPage({ oidc: true, problem: outcome.reason }));
    }
    await startSession(req, res, outcome.identity);
  });

  router.get('/sign-in/link', async (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : undefined;
    const identity = await sessions.redeemLink(token);
    if (!identity) {
      return page(res, 400, signInPage({ oidc: deps.oidc !== undefined, problem: 'This sign-in link has expired or was already used.' }));
    }
    await startSession(req, res, identity);
  });

  router.post('/sign-out', ...change, async (req, res) => {
    await sessions.end(cookieOf(req, SESSION_COOKIE));
    clearCookie(req, res, SESSION_COOKIE);
    res.redirect(303, '/console');
  });

  // --- Authorizations ------------------------------------------------------------------------------
  router.get('/authorizations/new', signedIn, (_req, res) => page(res, 200, createPage(viewerOf(sessionOf(res)), EMPTY_CREATE_FORM)));

  router.post('/authorizations', ...change, async (req, res) => {
    const session = sessionOf(res);
    const form = createFormOf(req.body as Record<string, unknown>);
    try {
      const created = await api.create(session, requestOf(form));
      deps.log.info(
        { organizationId: session.organizationId, clientId: created.clientId, subject: session.subject },
        'console: authorization created',
      );
      if ('claim' in created) {
        const { claim, ...authorization } = created;
        page(res, 201, claimLinkPage(viewerOf(session), authorization, claim));
        return;
      }
      // Decision 42: granted to a recipient account, there is no key to show: the grant's own page says which portfolio holds it.
      if (!('apiKey' in created)) {
        res.redirect(303, detailPath(created.clientId));
        return;
      }
      const { apiKey, ...authorization } = created;
      page(res, 201, keyPage(viewerOf(session), { authorization, apiKey, kind: 'created', pending: false }));
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'VALIDATION_FAILED') throw error;
      page(res, 400, createPage(viewerOf(session), form, fieldProblemsOf(error)));
    }
  });

  router.get('/authorizations/:clientId', signedIn, validClientId, async (req, res) => {
    const session = sessionOf(res);
    const { clientId } = req.params as { clientId: string };
    const query = accessLogQueryOf(req);
    const [authorization, accessLog, daily, certificates] = await Promise.all([
      api.get(session, clientId),
      api.accessLog(session, clientId, query),
      api.dailyReads(session, clientId),
      // Decision 55: the certificates the recipient fetched, from the access log (served ones only: a refusal is no certificate).
      api.accessLog(session, clientId, CERTIFICATES_FETCHED),
    ]);
    const notice = req.query.notice === 'revoked' ? 'Revoked. Reads with this authorization are refused from now on.' : undefined;
    page(
      res,
      200,
      detailPage(viewerOf(session), authorization, accessLog, {
        notice,
        olderThanFirstPage: query.has('cursor'),
        daily,
        certificates: certificates.items,
      }),
    );
  });

  router.get('/authorizations/:clientId/revoke', signedIn, validClientId, async (req, res) => {
    const session = sessionOf(res);
    const authorization = await api.get(session, String(req.params.clientId));
    if (authorization.status !== 'active' && authorization.status !== 'pending')
      return res.redirect(303, detailPath(authorization.clientId));
    page(res, 200, confirmRevokePage(viewerOf(session), authorization));
  });

  router.post('/authorizations/:clientId/revoke', ...change, validClientId, async (req, res) => {
    const session = sessionOf(res);
    const clientId = String(req.params.clientId);
    await api.revoke(session, clientId);
    deps.log.info({ organizationId: session.organizationId, clientId, subject: session.subject }, 'console: authorization revoked');
    res.redirect(303, `${detailPath(clientId)}?notice=revoked`);
  });

  router.post('/authorizations/:clientId/claim-link', ...change, validClientId, async (req, res) => {
    const session = sessionOf(res);
    const clientId = String(req.params.clientId);
    const seconds = (req.body as Record<string, unknown>).claimValidSeconds;
    const body = typeof seconds === 'string' && seconds !== '' ? { claimValidSeconds: wholeNumberOr(seconds) } : {};
    const issued = await api.claimLink(session, clientId, body);
    deps.log.info({ organizationId: session.organizationId, clientId, subject: session.subject }, 'console: claim link issued');
    const { claim, ...authorization } = issued;
    page(res, 200, claimLinkPage(viewerOf(session), authorization, claim));
  });

  router.post('/authorizations/:clientId/rotate', ...change, validClientId, async (req, res) => {
    const session = sessionOf(res);
    const clientId = String(req.params.clientId);
    const overlap = (req.body as Record<string, unknown>).overlapSeconds;
    // Digits only: a blank must not become 0, the choice that stops the current key at once.
    const overlapSeconds = typeof overlap === 'string' && /^[0-9]{1,7}$/.test(overlap) ? Number(overlap) : NaN;
    if (!(overlapSeconds >= 0 && overlapSeconds <= MAX_OVERLAP_SECONDS)) {
      throw new ApiError('VALIDATION_FAILED', 'Choose how long the current key keeps working.');
    }
    const { rotated, pending } = await api.rotate(session, clientId, { overlapSeconds });
    deps.log.info({ organizationId: session.organizationId, clientId, subject: session.subject }, 'console: key rotated');
    const { apiKey, previousKeyExpiresAt, ...authorization } = rotated;
    page(res, 200, keyPage(viewerOf(session), { authorization, apiKey, kind: 'rotated', previousKeyExpiresAt, pending }));
  });

  // --- Alert webhooks -----------------------------------------------------------------------------
  alertWebhookRoutes(router, {
    access: deps.alertWebhooks,
    signedIn,
    change,
    actorOf: (res) => sessionOf(res),
    viewerOf: (res) => viewerOf(sessionOf(res)),
    page,
    log: deps.log,
  });

  // --- Audit log ----------------------------------------------------------------------------------
  const reviewDeps = { api, signedIn, change, sessionOf, viewerOf: (res: Response) => viewerOf(sessionOf(res)), page, log: deps.log };
  auditLogRoutes(router, reviewDeps);

  // --- Access reviews -----------------------------------------------------------------------------
  accessReviewRoutes(router, reviewDeps);

  router.use(async (req, res) => {
    // A path that is not valid percent-encoding names no page: the 400 every service answers (decision 50).
    if (hasMalformedPercentEncoding(req.path)) throw malformedPath();
    const session = await currentSession(req, res);
    page(res, 404, problemPage('Page not found', 'There is no such page in the console.', session && viewerOf(session)));
  });
  router.use(errorHandler(deps.log, CONSOLE_ERRORS));

  async function startSession(req: Request, res: Response, identity: ConsoleIdentity): Promise<void> {
    // Whatever session cookie the browser brought ends here; the new one is issued fresh (no fixation).
    await sessions.end(cookieOf(req, SESSION_COOKIE));
    const { cookie } = await sessions.start(identity);
    setCookie(req, res, SESSION_COOKIE, cookie);
    deps.log.info({ organizationId: identity.organizationId, subject: identity.subject }, 'console: signed in');
    res.redirect(303, '/console');
  }

  return router;
}

const TITLES: Partial<Record<ApiError['code'], string>> = {
  AUTHORIZATION_NOT_FOUND: 'Authorization not found',
  AUTHORIZATION_INACTIVE: 'Authorization no longer active',
  WEBHOOK_NOT_FOUND: 'Webhook not found',
  WEBHOOK_MESSAGE_NOT_FOUND: 'Delivery not found',
  WEBHOOK_NOT_ACTIVE: 'Webhook not active',
  KEY_ALREADY_CLAIMED: 'Key already claimed',
  KEY_NOT_CLAIMED: 'Key not yet claimed',
  ACCESS_REVIEW_NOT_FOUND: 'Access review not found',
  ACCESS_REVIEW_ITEM_NOT_FOUND: 'Not a grant of this review',
  SERVICE_UNAVAILABLE: 'Try again in a moment',
  RATE_LIMITED: 'Too many requests',
  INVALID_PARAMETER: 'Invalid request',
  VALIDATION_FAILED: 'Invalid request',
  MALFORMED_JSON: 'Invalid request',
  PAYLOAD_TOO_LARGE: 'Invalid request',
  UNSUPPORTED_MEDIA_TYPE: 'Invalid request',
  INTERNAL_ERROR: 'Something went wrong',
};

const FORM_UNREADABLE = 'The form could not be read. Go back and try again.';

/** Errors as pages in words: what the API would say, never a stack trace or an internal. */
const CONSOLE_ERRORS: ErrorAnswers = {
  messages: {
    // The form parser's refusals: too large, malformed. A malformed path keeps the middleware's words.
    MALFORMED_JSON: FORM_UNREADABLE,
    PAYLOAD_TOO_LARGE: FORM_UNREADABLE,
    UNSUPPORTED_MEDIA_TYPE: FORM_UNREADABLE,
    SERVICE_UNAVAILABLE: 'A service the console needs is not reachable right now.',
    INTERNAL_ERROR: 'The console could not complete this request. Try again; if it persists, contact support.',
  },
  page: (error, res) => {
    // The session as the request found it, if it got that far: an error page looks up nothing more.
    const session = res.locals.session as ConsoleSession | undefined;
    return problemPage(TITLES[error.code] ?? 'Request refused', error.message, session && viewerOf(session)).value;
  },
};

function page(res: Response, status: number, body: Html): void {
  res.status(status).type('html').send(body.value);
}

/** The access log's page as asked: `limit` and `cursor`, each as often as given (the API refuses a repeated one by name). */
function accessLogQueryOf(req: Request): URLSearchParams {
  return passedOn(req, ['limit', 'cursor']);
}

function sessionOf(res: Response): ConsoleSession {
  return res.locals.session as ConsoleSession;
}

function viewerOf(session: ConsoleSession): Viewer {
  return { displayName: session.displayName, organizationId: session.organizationId, csrfToken: session.csrfToken };
}

/**
 * Defence in depth beside the token: a browser names the page a change came from; it must be this
 * console, as the request reached us or as the public URL names it (behind a proxy that rewrites Host).
 */
export function sameOrigin(req: Request, publicOrigin: string | undefined): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return req.headers['sec-fetch-site'] === undefined || req.headers['sec-fetch-site'] === 'same-origin';
  if (!URL.canParse(origin)) return false;
  const url = new URL(origin);
  return url.host === req.headers.host || url.origin === publicOrigin;
}

/** The named cookie's value, percent-decoded (RFC 6265 parsing by the `cookie` package, the one express serializes with). */
export function cookieOf(req: Request, name: string): string | undefined {
  return req.headers.cookie === undefined ? undefined : parseCookies(req.headers.cookie)[name];
}

/** Decision 31: HttpOnly, SameSite=Lax, Secure outside loopback, only for the console's paths. */
function setCookie(req: Request, res: Response, name: string, value: string, maxAgeSeconds?: number): void {
  res.cookie(name, value, {
    httpOnly: true,
    sameSite: 'lax',
    secure: !isLoopbackHost(req.hostname),
    path: '/console',
    ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds * 1000 }),
  });
}

function clearCookie(req: Request, res: Response, name: string): void {
  res.clearCookie(name, { httpOnly: true, sameSite: 'lax', secure: !isLoopbackHost(req.hostname), path: '/console' });
}

function createFormOf(body: Record<string, unknown>): CreateForm {
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const scopes = body.scopes;
  return {
    recipientType: text(body.recipientType),
    recipientName: text(body.recipientName),
    scopes: (Array.isArray(scopes) ? scopes : [scopes]).filter((scope): scope is string => typeof scope === 'string'),
    expiresAt: text(body.expiresAt).trim(),
    allowedCidrs: text(body.allowedCidrs),
    keyDelivery: text(body.keyDelivery) || 'response',
    claimValidSeconds: text(body.claimValidSeconds),
  };
}

/** The form as the API's create request; blanks are absent, so the API's own validation decides everything. */
function requestOf(form: CreateForm): Record<string, unknown> {
  const cidrs = form.allowedCidrs
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  return {
    recipientType: form.recipientType,
    ...(form.recipientName.trim() ? { recipientName: form.recipientName } : {}),
    scopes: form.scopes,
    ...(form.expiresAt ? { expiresAt: form.expiresAt } : {}),
    ...(cidrs.length > 0 ? { allowedCidrs: cidrs } : {}),
    // The validity only goes with a link; what it is, the API decides (a blank or a word is refused there).
    ...(form.keyDelivery === 'claimLink'
      ? { keyDelivery: 'claimLink', ...(form.claimValidSeconds ? { claimValidSeconds: wholeNumberOr(form.claimValidSeconds) } : {}) }
      : form.keyDelivery === 'response'
        ? {}
        : { keyDelivery: form.keyDelivery }),
  };
}

/** Digits as the number they write; anything else as given, for the API to refuse by name. */
function wholeNumberOr(value: string): number | string {
  return /^[0-9]{1,9}$/.test(value) ? Number(value) : value;
}

/** Where the API's wording is for programs (a list of enum values), the console says it for people. */
const PLAIN_PROBLEMS: Partial<Record<keyof CreateForm, string>> = {
  recipientType: 'choose the type of the receiving organization',
  scopes: 'choose at least one kind of data',
};

function fieldProblemsOf(error: ApiError): FieldProblems {
  return problemsByField(error, Object.keys(EMPTY_CREATE_FORM) as (keyof CreateForm)[], PLAIN_PROBLEMS);
}
