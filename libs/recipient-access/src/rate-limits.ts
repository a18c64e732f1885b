import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit, type AugmentedRequest, type Options } from 'express-rate-limit';
import { ApiError, type Logger } from '@rsd/platform';
import type { RateLimitStoreFactory } from '@rsd/ports';

const WINDOW_MS = 60_000;

export interface RateLimitDeps {
  stores: RateLimitStoreFactory;
  limitPerMinute: number;
  log: Logger;
  /** Told of every 429, by limiter name (for the rejections metric). */
  onRejected?: (limiter: 'credential' | 'failed-auth') => void;
}

/** A limiter's verdict, as the key check gives its own: the caller throws the refusal, the error path writes the 429. */
export type LimitOutcome = { outcome: 'allowed' } | { outcome: 'limited'; refusal: ApiError };

/** A limiter as one step of the handler. Its RateLimit and Retry-After headers are on the response either way. */
export type LimitCheck = (req: Request, res: Response) => Promise<LimitOutcome>;

function asCheck(middleware: RequestHandler): LimitCheck {
  return (req, res) =>
    new Promise((resolve, reject) => {
      void middleware(req, res, (outcome?: unknown) => {
        if (outcome === undefined) resolve({ outcome: 'allowed' });
        else if (outcome instanceof ApiError && outcome.code === 'RATE_LIMITED') resolve({ outcome: 'limited', refusal: outcome });
        else reject(outcome instanceof Error ? outcome : new Error('the rate limiter failed', { cause: outcome }));
      });
    });
}

/** Step 8 of the order of checks: requests per minute per credential, keyed by its Client ID. */
export function credentialRateLimit({
  stores,
  limitPerMinute,
  log,
  onRejected,
}: RateLimitDeps): (req: Request, res: Response, clientId: string) => Promise<LimitOutcome> {
  const clientIds = new WeakMap<Request, string>();
  const check = asCheck(
    rateLimit({
      ...commonOptions(log, 'credentialRateLimit'),
      store: stores('rl:credential:'),
      limit: limitPerMinute,
      identifier: 'credential',
      keyGenerator: (req) => clientIds.get(req) ?? '',
      handler: rateLimitExceeded(
        () => onRejected?.('credential'),
        (retryAfter) =>
          `Rate limit exceeded: at most ${limitPerMinute} requests per minute per credential; retry after ${retryAfter} seconds`,
      ),
    }),
  );
  return (req, res, clientId) => {
    clientIds.set(req, clientId);
    return check(req, res);
  };
}

/**
 * Counts failed authentications (steps 2 to 7: what someone guessing Client IDs or keys would
 * produce) per client address. Under the limit the failure goes on to its own error answer; over it,
 * the address's further failures answer 429 instead. Requests that authenticate are never counted or
 * stopped here, so one guesser behind a shared NAT does not lock out the recipients that share its
 * address.
 */
export function failedAuthenticationLimit({ stores, limitPerMinute, log, onRejected }: RateLimitDeps): LimitCheck {
  return asCheck(
    rateLimit({
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
    }),
  );
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

/** Both limiters' verdict over the limit: a refusal the error path answers 429 (the documented body, without a `code`). */
function rateLimitExceeded(count: () => void, message: (retryAfterSeconds: string) => string): Options['handler'] {
  return (_req, res, next) => {
    count();
    const retryAfter = String(res.getHeader('Retry-After') ?? WINDOW_MS / 1000);
    next(new ApiError('RATE_LIMITED', message(retryAfter), undefined, { 'Retry-After': retryAfter }));
  };
}
