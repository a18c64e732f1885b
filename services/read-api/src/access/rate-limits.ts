import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type AugmentedRequest, type Options } from 'express-rate-limit';
import { ApiError, type ErrorCode, type Logger } from '@rsd/platform';
import type { RateLimitStoreFactory } from '@rsd/ports';
import { sendErrorWithoutCode } from './error-without-code';
import { requestContext } from './request-context';

const WINDOW_MS = 60_000;

export interface RateLimitDeps {
  stores: RateLimitStoreFactory;
  limitPerMinute: number;
  log: Logger;
  /** Told of every 429, by limiter name (for the rejections metric). */
  onRejected?: (limiter: 'credential' | 'failed-auth') => void;
}

/** Step 8 of the order of checks: requests per minute per credential, keyed by its Client ID. */
export function credentialRateLimit({ stores, limitPerMinute, log, onRejected }: RateLimitDeps): RequestHandler {
  return rateLimit({
    ...commonOptions(log, 'credentialRateLimit'),
    store: stores('rl:credential:'),
    limit: limitPerMinute,
    identifier: 'credential',
    keyGenerator: (_req, res) => requestContext.clientId(res),
    handler: rateLimitExceeded(
      () => onRejected?.('credential'),
      (retryAfter) =>
        `Rate limit exceeded: at most ${limitPerMinute} requests per minute per credential; retry after ${retryAfter} seconds`,
    ),
  });
}

/** The failures of steps 2 to 7: the ones someone guessing Client IDs or keys would produce. */
const AUTHENTICATION_FAILURES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'MISSING_CLIENT_ID',
  'INVALID_CLIENT_ID',
  'MISSING_API_KEY',
  'CREDENTIAL_NOT_FOUND',
  'INVALID_API_KEY',
  'CREDENTIAL_INACTIVE',
]);

/**
 * Counts failed authentications per client address. Under the limit the failure goes on to the
 * error middleware unchanged; over it, the address's further failures answer 429 instead. Requests
 * that authenticate are never counted or stopped here, so one guesser behind a shared NAT does not
 * lock out the recipients that share its address.
 */
export function failedAuthenticationLimit({ stores, limitPerMinute, log, onRejected }: RateLimitDeps): ErrorRequestHandler {
  const limiter = rateLimit({
    ...commonOptions(log, 'failedAuthenticationRateLimit'),
    store: stores('rl:failed-auth:'),
    limit: limitPerMinute,
    identifier: 'failed-auth',
    // IPv4-mapped addresses count as their IPv4 address, and IPv6 by /56 network, as one client would hold it.
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? 'unknown'),
    handler: rateLimitExceeded(
      () => onRejected?.('failed-auth'),
      (retryAfter) => `Too many failed authentication attempts from this address; retry after ${retryAfter} seconds`,
    ),
  });
  return (error: unknown, req, res, next) => {
    if (!(error instanceof ApiError) || !AUTHENTICATION_FAILURES.has(error.code)) {
      next(error);
      return;
    }
    void limiter(req, res, (limiterError?: unknown) => next(limiterError ?? error));
  };
}

function commonOptions(log: Logger, requestPropertyName: string): Partial<Options> {
  return {
    windowMs: WINDOW_MS,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    requestPropertyName,
    retryAfter: (req) => wholeSecondsUntilReset(req, requestPropertyName),
    // A failing limiter store must not take the API down: the credential checks still hold.
    passOnStoreError: true,
    // Proxy headers are settled by `trust proxy` (TRUST_PROXY_HOPS): a client that sends them anyway
    // is no misconfiguration to warn about. The other checks (store reuse, double counting) stay on.
    validate: { xForwardedForHeader: false, forwardedHeader: false },
    logger: {
      error: (err, message) => log.error({ err }, message ?? 'rate limiter error'),
      warn: (err, message) => log.warn({ err }, message ?? 'rate limiter warning'),
    },
  };
}

/** Retry-After in whole seconds, never 0: a client told to wait 0 seconds would retry at once. */
function wholeSecondsUntilReset(req: Request, requestPropertyName: string): number {
  const resetTime = (req as AugmentedRequest)[requestPropertyName]?.resetTime;
  if (!resetTime) return WINDOW_MS / 1000;
  return Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
}

/** The one 429 writer for both limiters: the documented error body, without a `code`. */
function rateLimitExceeded(count: () => void, message: (retryAfterSeconds: string) => string): Options['handler'] {
  return (_req, res) => {
    count();
    const retryAfter = String(res.getHeader('Retry-After') ?? WINDOW_MS / 1000);
    sendErrorWithoutCode(res, 429, message(retryAfter));
  };
}
