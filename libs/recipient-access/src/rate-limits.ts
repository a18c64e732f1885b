import { hash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit, type AugmentedRequest, type Options, type RateLimitInfo } from 'express-rate-limit';
import { ApiError, type Logger } from '@rsd/platform';
import type { RateLimitStoreFactory } from '@rsd/ports';

const WINDOW_MS = 60_000;

export interface RateLimitDeps {
  stores: RateLimitStoreFactory;
  limitPerMinute: number;
  log: Logger;
  /** Told of every 429, by limiter name (for the rejections metric). */
  onRejected?: (limiter: LimiterName) => void;
}

/** A limiter's verdict, as the key check gives its own: the caller throws the refusal, the error path writes the 429. */
export type LimitOutcome = { outcome: 'allowed' } | { outcome: 'limited'; refusal: ApiError };

/** A limiter as one step of the handler. Its RateLimit headers are on the response either way; Retry-After comes with the refusal. */
export type LimitCheck = (req: Request, res: Response) => Promise<LimitOutcome>;

/**
 * `work`, whose refusals (an ApiError that `counts`) count against the address's budget of failed
 * authentications: over the budget, the answer is its 429 instead of the refusal.
 */
export async function countingFailures<T>(
  limitFailures: LimitCheck,
  req: Request,
  res: Response,
  work: () => Promise<T>,
  counts: (error: ApiError) => boolean = () => true,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ApiError) || !counts(error)) throw error;
    const limit = await limitFailures(req, res);
    throw limit.outcome === 'limited' ? limit.refusal : error;
  }
}

function asCheck(middleware: RequestHandler, name: LimiterName): LimitCheck {
  const headers = draft8Headers(name);
  return (req, res) =>
    new Promise((resolve, reject) => {
      void middleware(req, res, (outcome?: unknown) => {
        headers(req, res);
        if (outcome === undefined) resolve({ outcome: 'allowed' });
        else if (outcome instanceof ApiError && outcome.code === 'RATE_LIMITED') resolve({ outcome: 'limited', refusal: outcome });
        else reject(outcome instanceof Error ? outcome : new Error('the rate limiter failed', { cause: outcome }));
      });
    });
}

/** Step 8 of the order of checks: requests per minute per credential, keyed by its Client ID. */
export function credentialRateLimit(deps: RateLimitDeps): (req: Request, res: Response, clientId: string) => Promise<LimitOutcome> {
  return keyedRateLimit(deps, 'credential', 'rl:credential:', 'per credential');
}

/**
 * Decision 42: requests per minute per recipient account, over everything the account key reads (a
 * portfolio page counts once), keyed by the account's id in the shared store, so every replica
 * counts against one budget.
 */
export function accountRateLimit(deps: RateLimitDeps): (req: Request, res: Response, accountId: string) => Promise<LimitOutcome> {
  return keyedRateLimit(deps, 'account', 'rl:account:', 'per recipient account');
}

/**
 * Decision 50: requests per minute per organization to its webhook management in the notifier
 * (create, list, change, delete, rotate, test, redeliver, deliveries), the same limiter keyed by the
 * organization's id in the shared store. Asked only once the caller's token holds for that
 * organization, so no one else can spend its budget.
 */
export function organizationRateLimit(deps: RateLimitDeps): (req: Request, res: Response, organizationId: string) => Promise<LimitOutcome> {
  return keyedRateLimit(deps, 'organization', 'rl:organization:', 'per organization');
}

function keyedRateLimit(
  { stores, limitPerMinute, log, onRejected }: RateLimitDeps,
  name: 'credential' | 'account' | 'organization',
  prefix: string,
  per: string,
): (req: Request, res: Response, key: string) => Promise<LimitOutcome> {
  // The key rides on the request to keyGenerator: a property, which costs less than a WeakMap entry per read.
  const keyOf = Symbol(`${name} rate-limit key`);
  type Keyed = Request & { [keyOf]?: string };
  const check = asCheck(
    rateLimit({
      ...commonOptions(log, name),
      store: stores(prefix),
      limit: limitPerMinute,
      keyGenerator: (req) => (req as Keyed)[keyOf] ?? '',
      handler: rateLimitExceeded(
        name,
        () => onRejected?.(name),
        (retryAfter) => `Rate limit exceeded: at most ${limitPerMinute} requests per minute ${per}; retry after ${retryAfter} seconds`,
      ),
    }),
    name,
  );
  return (req, res, key) => {
    (req as Keyed)[keyOf] = key;
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
      ...commonOptions(log, 'failed-auth'),
      store: stores('rl:failed-auth:'),
      limit: limitPerMinute,
      // IPv4-mapped addresses count as their IPv4 address, and IPv6 by /56 network, as one client would hold it.
      keyGenerator: (req) => ipKeyGenerator(req.ip ?? 'unknown'),
      handler: rateLimitExceeded(
        'failed-auth',
        () => onRejected?.('failed-auth'),
        (retryAfter) => `Too many failed authentication attempts from this address; retry after ${retryAfter} seconds`,
      ),
    }),
    'failed-auth',
  );
}

export type LimiterName = 'credential' | 'account' | 'organization' | 'failed-auth';

/** Where express-rate-limit leaves each limiter's count on the request. */
const INFO_PROPERTY: Record<LimiterName, string> = {
  credential: 'credentialRateLimit',
  account: 'accountRateLimit',
  organization: 'organizationRateLimit',
  'failed-auth': 'failedAuthenticationRateLimit',
};

function commonOptions(log: Logger, name: LimiterName): Partial<Options> {
  return {
    windowMs: WINDOW_MS,
    // The draft-8 headers are written by draft8Headers, the same text for less work.
    standardHeaders: false,
    legacyHeaders: false,
    requestPropertyName: INFO_PROPERTY[name],
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

/** The most partition keys remembered: a busy replica's credentials and failing addresses, and a bound on memory. */
const PARTITION_KEYS_REMEMBERED = 10_000;

/**
 * The IETF draft 8 headers express-rate-limit writes with `standardHeaders: 'draft-8'`, to the
 * character (rate-limits.test.ts compares them with the library's), for less work per request: the
 * library hashes the key for its partition key on every request, and appends each header through
 * express's `res.append`; here a key's partition key is worked out once, and a header is set
 * directly unless one is there already. Written whatever the verdict, as the library does.
 */
function draft8Headers(name: LimiterName): (req: Request, res: Response) => void {
  const partitionKeys = new Map<string, string>();
  const partitionKeyOf = (key: string): string => {
    let partitionKey = partitionKeys.get(key);
    if (partitionKey === undefined) {
      partitionKey = Buffer.from(hash('sha256', key, 'hex').slice(0, 12)).toString('base64');
      if (partitionKeys.size >= PARTITION_KEYS_REMEMBERED) partitionKeys.clear();
      partitionKeys.set(key, partitionKey);
    }
    return partitionKey;
  };
  const windowSeconds = Math.ceil(WINDOW_MS / 1000);
  return (req, res) => {
    const info = rateLimitInfo(req, name);
    if (!info || res.headersSent) return;
    const resetSeconds = info.resetTime ? Math.max(0, Math.ceil((info.resetTime.getTime() - Date.now()) / 1000)) : windowSeconds;
    addHeader(res, 'RateLimit', `"${name}"; r=${info.remaining}; t=${resetSeconds}`);
    addHeader(res, 'RateLimit-Policy', `"${name}"; q=${info.limit}; w=${windowSeconds}; pk=:${partitionKeyOf(info.key)}:`);
  };
}

function rateLimitInfo(req: Request, name: LimiterName): RateLimitInfo | undefined {
  return (req as AugmentedRequest)[INFO_PROPERTY[name]];
}

/** `res.append`'s result: a second value makes the header a list. */
function addHeader(res: Response, name: string, value: string): void {
  const existing = res.getHeader(name);
  if (existing === undefined) res.setHeader(name, value);
  else res.setHeader(name, [...(Array.isArray(existing) ? existing : [String(existing)]), value]);
}

/** Retry-After in whole seconds, never 0: a client told to wait 0 seconds would retry at once. */
function wholeSecondsUntilReset(info: RateLimitInfo | undefined): number {
  if (!info?.resetTime) return WINDOW_MS / 1000;
  return Math.max(1, Math.ceil((info.resetTime.getTime() - Date.now()) / 1000));
}

/** Both limiters' verdict over the limit: a refusal the error path answers 429 (the documented body, without a `code`) with Retry-After. */
function rateLimitExceeded(name: LimiterName, count: () => void, message: (retryAfterSeconds: string) => string): Options['handler'] {
  return (req, _res, next) => {
    count();
    const retryAfter = String(wholeSecondsUntilReset(rateLimitInfo(req, name)));
    next(new ApiError('RATE_LIMITED', message(retryAfter), undefined, { 'Retry-After': retryAfter }));
  };
}
