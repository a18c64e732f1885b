import { randomBytes } from 'node:crypto';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { generateApiKey } from '@rsd/domain';
import { labelledRouter } from '@rsd/observability';
import { ApiError, errorHandler, methodNotAllowed, pageHeaders, requestIdOf, type ErrorAnswers, type Logger } from '@rsd/platform';
import { apiKeyOf, type LimitCheck } from '@rsd/recipient-access';
import { cookieOf, sameOrigin } from '../console/console-routes';
import { sameToken } from '../console/console-sessions';
import { isLoopbackHost } from '../console/oidc-sign-in';
import type { Html } from '../console/html';
import { claimRequestSchema } from '@rsd/contracts';
import { issueDetails, requestErrorMap, validationFailed } from '@rsd/platform';
import { accountGenerator } from '../portfolio/recipient-accounts';
import { claimIntoAccount, claimKey, describeClaim, type AccountChoice, type ClaimDeps } from './claim-key';
import { claimedKeyPage, claimPage, claimProblemPage, joinedAccountPage } from './claim-pages';
import { CLAIM_PATH, LOGGED_CLAIM_URL } from './claim-url';
import { viaOf } from '../commands/origin';

export interface ClaimRoutesDeps extends ClaimDeps {
  apiKeyPrefix: string;
  /** Failed attempts (unknown, used or expired links) count against the address's failed-authentication budget. */
  limitFailures: LimitCheck;
  /** The public origin a form may come from besides the Host the request reached (behind a proxy). */
  publicOrigin?: string;
  log: Logger;
}

const CSRF_COOKIE = 'rsd_claim_csrf';
const CSRF_LIFETIME_S = 60 * 60;
const BODY_LIMIT = '4kb';
const LINK_REFUSALS = new Set(['CLAIM_LINK_NOT_FOUND', 'CLAIM_LINK_USED', 'CLAIM_LINK_EXPIRED', 'INVALID_API_KEY']);

/**
 * Decision 38: `/claim/{token}`. GET describes the grant and consumes nothing (mail scanners open
 * links); POST creates the key and shows it once. A page for a browser, JSON for a program: the page
 * form carries a CSRF token that a cookie of this path must match (the recipient has no session to
 * hold one), the JSON form needs no cookie. The token is in the path, so nothing here logs the path.
 */
export function claimRoutes(deps: ClaimRoutesDeps): Router {
  const generate = { apiKey: () => generateApiKey(deps.apiKeyPrefix) };
  const router = labelledRouter();

  router.use((_req, res, next) => {
    res.locals.loggedUrl = LOGGED_CLAIM_URL;
    // The grant, and on a POST the key: nothing is cached anywhere.
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  // Its pages are the console's kind: the one page policy.
  router.use(pageHeaders());

  /** A refused link counts against the address; over the budget, the answer is the 429 instead. */
  const limited = async <T>(req: Request, res: Response, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof ApiError) || !LINK_REFUSALS.has(error.code)) throw error;
      const limit = await deps.limitFailures(req, res);
      throw limit.outcome === 'limited' ? limit.refusal : error;
    }
  };

  router
    .route('/:token')
    .get(async (req, res) => {
      const json = req.accepts(['html', 'json']) === 'json';
      res.locals.claimPage = !json;
      const grant = await limited(req, res, () => describeClaim(deps, String(req.params.token)));
      if (json) {
        res.json(grant);
        return;
      }
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
      res.locals.claimPage = !json;
      if (!json && !formIsOurs(req, deps.publicOrigin)) {
        deps.log.warn({ path: LOGGED_CLAIM_URL }, 'claim form refused: CSRF check failed');
        const message = 'This form has expired or did not come from this page. Open the link again and claim from there.';
        page(res, 403, claimProblemPage('Form expired', message));
        return;
      }
      const token = String(req.params.token);
      const who = { clientAddress: req.ip ?? null, requestId: requestIdOf(res) ?? 'unknown', via: viaOf(req) };
      const into = accountChoiceOf(req, json);
      if (into) {
        const claim = await limited(req, res, () => claimIntoAccount(deps, accountGenerator, token, who, into));
        if (json) {
          res.status(201).json(claim.joined);
          return;
        }
        res.clearCookie(CSRF_COOKIE, { httpOnly: true, sameSite: 'strict', secure: !isLoopbackHost(req.hostname), path: CLAIM_PATH });
        page(res, 201, joinedAccountPage(claim.grant, claim.joined, claim.publication !== 'published'));
        return;
      }
      const claim = await limited(req, res, () => claimKey(deps, generate, token, who));
      if (json) {
        res.status(201).json(claim.claimed);
        return;
      }
      res.clearCookie(CSRF_COOKIE, { httpOnly: true, sameSite: 'strict', secure: !isLoopbackHost(req.hostname), path: CLAIM_PATH });
      page(res, 201, claimedKeyPage(claim.grant, claim.claimed, claim.publication !== 'published'));
    })
    .all(methodNotAllowed(['GET', 'HEAD', 'POST']));

  router.use(errorHandler(deps.log, CLAIM_ERRORS));
  return router;
}

/**
 * Decision 42: a claim into an account, or undefined for a key of its own (the default: no body, or
 * `{}`). A JSON body must be a ClaimRequest object. An account key comes in `x-api-key` from a
 * program, or in the form's field from the page.
 */
function accountChoiceOf(req: Request, json: boolean): AccountChoice | undefined {
  const raw: unknown = req.body;
  const body = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  if (json && raw !== undefined && body === undefined)
    throw validationFailed([{ path: '', message: 'must be a JSON object (a ClaimRequest)' }]);
  const given = body ?? {};
  const fields = json ? given : { into: given.into, accountName: given.accountName === '' ? undefined : given.accountName };
  const parsed = claimRequestSchema.safeParse(fields, { error: requestErrorMap });
  if (!parsed.success) throw validationFailed(issueDetails(parsed.error.issues));
  if (parsed.data.into !== 'account') return undefined;
  const headerKey = req.headers['x-api-key'] === undefined ? undefined : apiKeyOf(req.headers['x-api-key']);
  const formKey = typeof given.accountKey === 'string' && given.accountKey.trim() !== '' ? given.accountKey.trim() : undefined;
  const accountKey = json ? headerKey : formKey;
  return accountKey !== undefined ? { accountKey } : { accountName: parsed.data.accountName ?? null };
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
