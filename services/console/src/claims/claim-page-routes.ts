import { randomBytes } from 'node:crypto';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { ClaimGrant, ClaimedIntoNewAccount, ClaimedKey, JoinedAccount } from '@rsd/contracts';
import { labelledRouter } from '@rsd/observability';
import { ApiError, errorHandler, methodNotAllowed, pageHeaders, type ErrorAnswers, type Logger } from '@rsd/platform';
import { consoleErrorOf, type CredentialsApi, type RelayedAnswer } from '../credentials-api';
import { cookieOf, sameOrigin } from '../console/console-routes';
import { sameToken } from '../console/console-sessions';
import { isLoopbackHost } from '../console/oidc-sign-in';
import type { Html } from '../console/html';
import { claimedKeyPage, claimPage, claimProblemPage, joinedAccountPage } from './claim-pages';

export interface ClaimPageRoutesDeps {
  credentials: CredentialsApi;
  /** The public origin a form may come from besides the Host the request reached (behind a proxy). */
  publicOrigin?: string | undefined;
  log: Logger;
}

/** Decision 38: claim links live outside the versioned API, on the console's origin (decision 51). */
export const CLAIM_PATH = '/claim';
/** What the logs name instead of a claim link: its path holds the token. */
export const LOGGED_CLAIM_URL = `${CLAIM_PATH}/[redacted]`;

const CSRF_COOKIE = 'rsd_claim_csrf';
const CSRF_LIFETIME_S = 60 * 60;
const BODY_LIMIT = '4kb';
/** What the credentials service's answer to a program may carry on (its limits, its wait). */
const RELAYED_HEADERS = ['retry-after', 'ratelimit', 'ratelimit-policy', 'www-authenticate'];

/**
 * Decision 38's page for a recipient at `/claim/{token}`, a client of the credentials service's claim
 * API (decision 51). GET shows the grant and consumes nothing (mail scanners open links); the form's
 * POST claims the key and shows it once. The form carries a CSRF token that a cookie of this path must
 * match (the recipient has no session to hold one). A program that follows the link (JSON) gets the
 * API's own answer, relayed. Every call names the browser's address, signed by the console, so failed
 * attempts count against the browser, not the console. The token is in the path: nothing logs it.
 */
export function claimPageRoutes(deps: ClaimPageRoutesDeps): Router {
  const router = labelledRouter();

  router.use((_req, res, next) => {
    res.locals.loggedUrl = LOGGED_CLAIM_URL;
    // The grant, and on a POST the key: nothing is cached anywhere.
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  // Its pages are the console's kind: the one page policy.
  router.use(pageHeaders());

  const ask = (req: Request, method: 'GET' | 'POST', extra: { body?: unknown; accountKey?: string } = {}) =>
    deps.credentials.claim(method, String(req.params.token), { address: req.ip ?? 'unknown', ...extra });
  /** The API's success, or its refusal as a page's error. */
  const answered = <T>(answer: RelayedAnswer): T => {
    if (answer.status >= 200 && answer.status < 300) return answer.body as T;
    throw consoleErrorOf(answer, answer.body, deps.log);
  };

  router
    .route('/:token')
    .get(async (req, res) => {
      if (req.accepts(['html', 'json']) === 'json') return relay(res, await ask(req, 'GET'));
      res.locals.claimPage = true;
      const grant = answered<ClaimGrant>(await ask(req, 'GET'));
      const csrfToken = randomBytes(32).toString('base64url');
      res.cookie(CSRF_COOKIE, csrfToken, {
        httpOnly: true,
        sameSite: 'strict',
        secure: !isLoopbackHost(req.hostname),
        path: CLAIM_PATH,
        maxAge: CSRF_LIFETIME_S * 1000,
      });
      page(res, 200, claimPage(grant, `${CLAIM_PATH}/${String(req.params.token)}`, csrfToken));
    })
    .post(...bodies(), async (req, res) => {
      const json = Boolean(req.is('application/json')) || req.accepts(['html', 'json']) === 'json';
      if (json) {
        const accountKey = typeof req.headers['x-api-key'] === 'string' ? req.headers['x-api-key'] : undefined;
        return relay(res, await ask(req, 'POST', { body: req.body as unknown, ...(accountKey === undefined ? {} : { accountKey }) }));
      }
      res.locals.claimPage = true;
      if (!formIsOurs(req, deps.publicOrigin)) {
        deps.log.warn({ path: LOGGED_CLAIM_URL }, 'claim form refused: CSRF check failed');
        const message = 'This form has expired or did not come from this page. Open the link again and claim from there.';
        page(res, 403, claimProblemPage('Form expired', message));
        return;
      }
      // What the link grants, for the page that shows the key: read before the claim uses the link up.
      const grant = answered<ClaimGrant>(await ask(req, 'GET'));
      const form = (req.body ?? {}) as Record<string, unknown>;
      const intoAccount = form.into === 'account';
      const accountKey = typeof form.accountKey === 'string' && form.accountKey.trim() !== '' ? form.accountKey.trim() : undefined;
      const accountName = typeof form.accountName === 'string' && form.accountName !== '' ? form.accountName : undefined;
      const body = intoAccount
        ? { into: 'account', ...(accountKey === undefined && accountName !== undefined ? { accountName } : {}) }
        : {};
      type Claimed = (ClaimedKey | ClaimedIntoNewAccount | JoinedAccount) & { enforcement?: 'pending' };
      const claimed = answered<Claimed>(await ask(req, 'POST', { body, ...(intoAccount && accountKey ? { accountKey } : {}) }));
      const pending = claimed.enforcement === 'pending';
      res.clearCookie(CSRF_COOKIE, { httpOnly: true, sameSite: 'strict', secure: !isLoopbackHost(req.hostname), path: CLAIM_PATH });
      if ('accountId' in claimed) page(res, 201, joinedAccountPage(grant, claimed, pending));
      else page(res, 201, claimedKeyPage(grant, claimed, pending));
    })
    .all(methodNotAllowed(['GET', 'HEAD', 'POST']));

  router.use(errorHandler(deps.log, CLAIM_ERRORS));
  return router;
}

/** The credentials service's answer to a program, as it gave it. */
function relay(res: Response, answer: RelayedAnswer): void {
  for (const name of RELAYED_HEADERS) {
    const value = answer.headers.get(name);
    if (value !== null) res.setHeader(name, value);
  }
  res.status(answer.status).json(answer.body);
}

/** JSON for a program, a form for the page; anything else reaches the CSRF check and fails it. */
function bodies(): RequestHandler[] {
  const json = express.json({ limit: BODY_LIMIT, strict: false });
  const form = express.urlencoded({ extended: false, limit: BODY_LIMIT, parameterLimit: 10 });
  return [json, form];
}

/** The page's own form: same origin, and the token it carries is the one its cookie holds (double submit). */
function formIsOurs(req: Request, publicOrigin: string | undefined): boolean {
  const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, unknown>;
  const cookie = cookieOf(req, CSRF_COOKIE);
  return cookie !== undefined && sameOrigin(req, publicOrigin) && sameToken(body._csrf, cookie);
}

const TITLES: Partial<Record<ApiError['code'], string>> = {
  CLAIM_LINK_NOT_FOUND: 'Link not found',
  CLAIM_LINK_USED: 'Link already used',
  CLAIM_LINK_EXPIRED: 'Link expired',
  INVALID_API_KEY: 'Account key not accepted',
  KEY_READ_ONLY: 'Account key not accepted',
  VALIDATION_FAILED: 'Invalid request',
  RATE_LIMITED: 'Too many attempts',
  MALFORMED_JSON: 'Invalid request',
  PAYLOAD_TOO_LARGE: 'Invalid request',
  UNSUPPORTED_MEDIA_TYPE: 'Invalid request',
  SERVICE_UNAVAILABLE: 'Try again in a moment',
};

/**
 * The refusals in this route's words, as a page where the request wanted one. The log never sees the
 * request's path (it holds the token): the middleware logs the route's `loggedUrl` instead.
 */
const CLAIM_ERRORS: ErrorAnswers = {
  messages: {
    VALIDATION_FAILED: 'The link is not valid percent-encoded UTF-8',
    MALFORMED_JSON: 'The request body could not be read',
    UNSUPPORTED_MEDIA_TYPE: 'The request body must be JSON encoded as UTF-8, or the form',
  },
  page: (error, res) =>
    res.locals.claimPage === true ? claimProblemPage(TITLES[error.code] ?? 'Something went wrong', error.message).value : undefined,
};

function page(res: Response, status: number, body: Html): void {
  res.status(status).type('html').send(body.value);
}
