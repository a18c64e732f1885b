import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { claimRequestSchema } from '@rsd/contracts';
import { generateApiKey } from '@rsd/domain';
import { labelledRouter } from '@rsd/observability';
import {
  errorHandler,
  answerOtherMethods,
  parsedBody,
  requestIdOf,
  requireJsonBody,
  validationFailed,
  type ErrorAnswers,
  type Logger,
  viaOf,
} from '@rsd/platform';
import { apiKeyOf, countingFailures, type LimitCheck } from '@rsd/recipient-access';
import { accountGenerator } from '../portfolio/recipient-accounts';
import { claimIntoAccount, claimKey, describeClaim, type AccountChoice, type ClaimDeps } from './claim-key';
import { LOGGED_CLAIM_URL } from './claim-url';

export interface ClaimRoutesDeps extends ClaimDeps {
  apiKeyPrefix: string;
  /** Failed attempts (unknown, used or expired links) count against the address's failed-authentication budget. */
  limitFailures: LimitCheck;
  /**
   * Decision 51: the console, whose page claims the key for a person. A browser that opens a link printed
   * before the console had its own service is sent there (path and query kept); undefined: none is known.
   */
  consoleUrl?: string | undefined;
  /** The browser's address as the console vouches for it (its signed token), when the console's page asks. */
  addressFromConsole: (token: string) => Promise<string | undefined>;
  log: Logger;
}

const BODY_LIMIT = '4kb';
const LINK_REFUSALS = new Set(['CLAIM_LINK_NOT_FOUND', 'CLAIM_LINK_USED', 'CLAIM_LINK_EXPIRED', 'INVALID_API_KEY']);
const BEARER = /^bearer +([A-Za-z0-9._~+/=-]+)$/i;

/**
 * Decision 38: `/claim/{token}`, the API of a claim link. GET describes the grant and consumes nothing
 * (mail scanners open links); POST creates the key and answers it once. JSON only: the page a person
 * sees is the console's (decision 51), which calls this API; a browser that asks here for a page, or
 * posts a form, is redirected to the console with the same path. The token is in the path, so
 * nothing here logs the path.
 */
export function claimRoutes(deps: ClaimRoutesDeps): Router {
  const generate = { apiKey: () => generateApiKey(deps.apiKeyPrefix) };
  const router = labelledRouter();

  router.use(async (req, res, next) => {
    res.locals.loggedUrl = LOGGED_CLAIM_URL;
    // The grant, and on a POST the key: nothing is cached anywhere.
    res.setHeader('Cache-Control', 'no-store');
    // The console's page asks for the browser: its failures count against the browser's address, and the claim records it.
    const bearer = BEARER.exec(req.headers.authorization ?? '')?.[1];
    const vouched = bearer === undefined ? undefined : await deps.addressFromConsole(bearer);
    if (vouched !== undefined) Object.defineProperty(req, 'ip', { value: vouched, configurable: true });
    next();
  });

  /** A refused link counts against the address; over the budget, the answer is the 429 instead. */
  const limited = <T>(req: Request, res: Response, work: () => Promise<T>) =>
    countingFailures(deps.limitFailures, req, res, work, (error) => LINK_REFUSALS.has(error.code));

  /** A browser's request (a page, a form) goes to the console's page of the same link. */
  const toConsole: RequestHandler = (req, res, next) => {
    const wantsPage =
      req.method === 'POST'
        ? !req.is('application/json') && req.accepts(['html', 'json']) !== 'json'
        : req.accepts(['html', 'json']) === 'html';
    if (!wantsPage || deps.consoleUrl === undefined) return next();
    // 307: the method and the body stay, so a form posted to an old page reaches the console (whose own checks refuse it).
    res.redirect(307, `${deps.consoleUrl.replace(/\/+$/, '')}${req.originalUrl}`);
  };

  router
    .route('/:token')
    .get(toConsole, async (req, res) => {
      res.json(await limited(req, res, () => describeClaim(deps, String(req.params.token))));
    })
    .post(toConsole, requireJsonBody, express.json({ limit: BODY_LIMIT, strict: false }), async (req, res) => {
      const token = String(req.params.token);
      const who = { clientAddress: req.ip ?? null, requestId: requestIdOf(res) ?? 'unknown', via: viaOf(req) };
      const into = accountChoiceOf(req);
      if (into) {
        const claim = await limited(req, res, () => claimIntoAccount(deps, accountGenerator, token, who, into));
        res.status(201).json({ ...claim.joined, ...pendingOf(claim.publication) });
        return;
      }
      const claim = await limited(req, res, () => claimKey(deps, generate, token, who));
      res.status(201).json({ ...claim.claimed, ...pendingOf(claim.publication) });
    });

  router.use(errorHandler(deps.log, CLAIM_ERRORS));
  return answerOtherMethods(router);
}

/** The refusals in this route's words. The log never sees the request's path (it holds the token): the middleware logs `loggedUrl`. */
const CLAIM_ERRORS: ErrorAnswers = {
  messages: {
    VALIDATION_FAILED: 'The link is not valid percent-encoded UTF-8',
    MALFORMED_JSON: 'The request body could not be read',
    UNSUPPORTED_MEDIA_TYPE: 'The request body must be JSON encoded as UTF-8',
  },
};

/** Decision 29: recorded, but its event not yet in the event log: the key (or the grant) works within moments, not yet. */
const pendingOf = (publication: string) => (publication === 'published' ? {} : { enforcement: 'pending' as const });

/**
 * Decision 42: a claim into an account, or undefined for a key of its own (the default: no body, or
 * `{}`). A body must be a ClaimRequest object; an account key comes in `x-api-key`.
 */
function accountChoiceOf(req: Request): AccountChoice | undefined {
  const raw: unknown = req.body;
  const body = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  if (raw !== undefined && body === undefined) throw validationFailed([{ path: '', message: 'must be a JSON object (a ClaimRequest)' }]);
  const request = parsedBody(claimRequestSchema, body ?? {});
  if (request.into !== 'account') return undefined;
  const accountKey = req.headers['x-api-key'] === undefined ? undefined : apiKeyOf(req.headers['x-api-key']);
  return accountKey !== undefined ? { accountKey } : { accountName: request.accountName ?? null };
}
