import type { Request, Response } from 'express';
import { ACCOUNT_KEY_PREFIX, clientIdPattern, type Scope } from '@rsd/contracts';
import {
  addressAllowed,
  checkAccess,
  checkAccountAccess,
  credentialView,
  identifyCaller,
  recipientAccountView,
  type AuthenticationRefusal,
  type CredentialFormatRules,
  type CredentialView,
  type KeyMatch,
} from '@rsd/domain';
import { ApiError, type Logger } from '@rsd/platform';
import type { Clock, RateLimitStoreFactory, ViewStore } from '@rsd/ports';
import { accountRateLimit, credentialRateLimit, failedAuthenticationLimit, type RateLimitDeps } from './rate-limits';
import type { RecipientAccessConfig } from './recipient-access-config';

export interface RecipientAuthenticationDeps {
  config: RecipientAccessConfig;
  /** Where the credential views are: the one lookup of the order of checks. */
  views: ViewStore;
  rateLimitStores: RateLimitStoreFactory;
  clock: Clock;
  log: Logger;
  onRateLimited?: RateLimitDeps['onRejected'];
}

export interface AuthenticationRequest {
  /** The Client ID path segment as received (percent-encoded); undefined when the path has none. */
  rawClientId: string | undefined;
  /** Step 9, checked after the rate limit; none: any active credential may go on (the notifier's routes). */
  scope?: Scope;
  /** Told once the lookup found the credential, whatever follows (the read API's access log). */
  onCredentialFound?: (clientId: string, clientAddress: string | undefined) => void;
}

export interface AuthenticatedRecipient {
  clientId: string;
  credential: CredentialView;
  clientAddress: string | undefined;
  /** Decision 42: the recipient account whose key was presented; undefined for the grant's own key. */
  accountId?: string;
  /** Decision 50: which key it was, the current one or the previous one of a rotation's overlap (which only reads). */
  key: KeyMatch;
  /** The stored digest of that key (the grant's, or its account's): what a webhook it makes records. */
  keyDigest: string;
}

/** Decision 42: an account key is told from a grant's key by its prefix alone, before any lookup. */
export function isAccountKey(apiKey: string): boolean {
  return apiKey.startsWith(`${ACCOUNT_KEY_PREFIX}_`);
}

/**
 * Steps 2 to 9 of the order of checks (decision 6), with the allow list of decision 22 between 7 and
 * 8: identify the caller, look the credential up once, check it, the allow list, the credential's
 * rate limit, then the scope. A refusal of steps 2 to 7 passes the per-address limiter first, so
 * nobody can guess keys fast. Throws the documented ApiError for each refusal (a limiter's 429
 * included), else resolves with who the recipient is.
 */
export function recipientAuthenticator(deps: RecipientAuthenticationDeps) {
  const { config, views, clock } = deps;
  const rules: CredentialFormatRules = { clientIdPattern: clientIdPattern(config.CLIENT_ID_PREFIX) };
  const limits = { stores: deps.rateLimitStores, log: deps.log, onRejected: deps.onRateLimited };
  const limitCredential = credentialRateLimit({ ...limits, limitPerMinute: config.RATE_LIMIT_PER_MINUTE });
  const limitFailures = failedAuthenticationLimit({ ...limits, limitPerMinute: config.FAILED_AUTH_LIMIT_PER_MINUTE });
  const limitAccount = accountRateLimit({ ...limits, limitPerMinute: config.ACCOUNT_RATE_LIMIT_PER_MINUTE });
  const refusalMessages = refusalMessagesFor(config.CLIENT_ID_PREFIX);
  // With no proxy trusted, express's req.ip is the peer's address, found after parsing X-Forwarded-For
  // into a list it then ignores: on every read. The peer's address is taken directly instead.
  const addressOf = config.TRUST_PROXY_HOPS === 0 ? (req: Request) => req.socket.remoteAddress : (req: Request) => req.ip;

  return async (req: Request, res: Response, request: AuthenticationRequest): Promise<AuthenticatedRecipient> => {
    const refuse = async (code: AuthenticationRefusal): Promise<never> => {
      const limit = await limitFailures(req, res);
      throw limit.outcome === 'limited' ? limit.refusal : new ApiError(code, refusalMessages[code]);
    };

    const identified = identifyCaller({ clientId: percentDecoded(request.rawClientId), apiKey: apiKeyOf(req.headers['x-api-key']) }, rules);
    if (identified.outcome === 'refused') return refuse(identified.code);
    const { clientId } = identified.caller;

    const found = await views.get(credentialView, clientId);
    // The address as the service determines it (TRUST_PROXY_HOPS included), worked out once.
    const clientAddress = addressOf(req);
    if (found) request.onCredentialFound?.(clientId, clientAddress);
    // Decision 42: an account key reads the grants its account holds, with the checks the grant's own key gets.
    const accountId = isAccountKey(identified.caller.apiKey) ? found?.recipientAccountId : undefined;
    const account = accountId ? await views.get(recipientAccountView, accountId) : undefined;
    const byAccount = isAccountKey(identified.caller.apiKey);
    const access = byAccount
      ? checkAccountAccess(identified.caller, found, account, request.scope, clock.now())
      : checkAccess(identified.caller, found, request.scope, clock.now());
    if (access.outcome === 'refused') return refuse(access.code);
    // Decision 22, between steps 7 and 8.
    if (!addressAllowed(access.credential.allowedCidrs, clientAddress)) {
      throw new ApiError('ADDRESS_NOT_ALLOWED', 'This credential may not be used from this client address');
    }
    const limit = account ? await limitAccount(req, res, account.accountId) : await limitCredential(req, res, clientId);
    if (limit.outcome === 'limited') throw limit.refusal;
    if (access.outcome === 'forbidden') throw new ApiError(access.code, `This credential was not granted the ${request.scope} scope`);
    const { key } = access;
    // Whichever matched has a digest: a view without one verifies no key.
    const holder = byAccount ? account : access.credential;
    const keyDigest = (key === 'current' ? holder?.keyDigest : holder?.previousKeyDigest) ?? '';
    return { clientId, credential: access.credential, clientAddress, key, keyDigest, ...(account ? { accountId: account.accountId } : {}) };
  };
}

function refusalMessagesFor(prefix: string): Record<AuthenticationRefusal, string> {
  return {
    MISSING_CLIENT_ID: 'The path has no Client ID: use /v1/customers/{clientId}/...',
    INVALID_CLIENT_ID: `The Client ID is not in the expected format ${prefix}_<16-64 letters or digits>`,
    MISSING_API_KEY: 'The x-api-key header is required',
    CREDENTIAL_NOT_FOUND: 'No credential exists for this Client ID',
    INVALID_API_KEY: 'The API key is not valid for this Client ID',
    CREDENTIAL_INACTIVE: 'The credential has been revoked, has expired or is not active',
  };
}

/**
 * The segment gets standard percent-decoding and nothing else: no trimming, no case folding.
 * undefined when the path has no segment; null for a malformed escape or bytes that are not UTF-8
 * (`%FF`), which is INVALID_CLIENT_ID.
 */
function percentDecoded(segment: string | undefined): string | undefined | null {
  if (segment === undefined) return undefined;
  // Most Client IDs hold no escape: decoding them would only copy them, on every read.
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** Node joins a repeated header with ", ", so two keys arrive as one value that cannot verify. */
export function apiKeyOf(header: string | string[] | undefined): string {
  return Array.isArray(header) ? header.join(', ') : (header ?? '');
}
