import type { Request, Response } from 'express';
import { ACCOUNT_KEY_PREFIX } from '@rsd/contracts';
import {
  accountKeyMatch,
  accountKeyView,
  digestApiKey,
  hasValidChecksum,
  recipientAccountView,
  type KeyMatch,
  type RecipientAccountView,
} from '@rsd/domain';
import { ApiError } from '@rsd/platform';
import { accountRateLimit, countingFailures, failedAuthenticationLimit } from './rate-limits';
import { apiKeyOf, type RecipientAuthenticationDeps } from './authenticate-recipient';

export interface AuthenticatedAccount {
  account: RecipientAccountView;
  clientAddress: string | undefined;
  /** Decision 50: the current key, or the previous one of a rotation's overlap (which only reads). */
  key: KeyMatch;
}

const INVALID_ACCOUNT_KEY = 'The x-api-key header does not hold a valid recipient account key';

/**
 * An account key's account, wherever accounts are kept (the read side's views, the credentials
 * service's store): the key's checksum first (a mistyped key is refused without a lookup), then the
 * account `find` names by the key's digest, whose current or overlapping key must verify in constant
 * time (an index is never the only check); the answer says which of the two it was.
 */
export async function verifyAccountKey<Account extends Parameters<typeof accountKeyMatch>[1]>(
  apiKey: string,
  now: Date,
  find: (digest: string) => Promise<Account | undefined>,
): Promise<{ account: Account; key: KeyMatch }> {
  if (apiKey === '') throw new ApiError('MISSING_API_KEY', 'The x-api-key header with the recipient account key is required');
  if (!hasValidChecksum(apiKey, ACCOUNT_KEY_PREFIX)) throw new ApiError('INVALID_API_KEY', INVALID_ACCOUNT_KEY);
  const account = await find(digestApiKey(apiKey));
  const key = account && accountKeyMatch(apiKey, account, now);
  if (!account || !key) throw new ApiError('INVALID_API_KEY', INVALID_ACCOUNT_KEY);
  return { account, key };
}

/**
 * Decision 42: who calls `/portfolio`, from the account key alone. The key's checksum first (a
 * mistyped key is refused without a lookup), then two lookups: the key's digest names an account,
 * whose current key (or previous one within its overlap, told apart) must verify in constant time. A refusal
 * passes the per-address limiter of failed authentications first, as on the per-customer paths;
 * then the account's own limit (decision 42's 1,200 a minute) applies.
 */
export function accountAuthenticator(deps: RecipientAuthenticationDeps) {
  const { config, views, clock } = deps;
  const limits = { stores: deps.rateLimitStores, log: deps.log, onRejected: deps.onRateLimited };
  const limitFailures = failedAuthenticationLimit({ ...limits, limitPerMinute: config.FAILED_AUTH_LIMIT_PER_MINUTE });
  const limitAccount = accountRateLimit({ ...limits, limitPerMinute: config.ACCOUNT_RATE_LIMIT_PER_MINUTE });
  const addressOf = config.TRUST_PROXY_HOPS === 0 ? (req: Request) => req.socket.remoteAddress : (req: Request) => req.ip;

  return async (req: Request, res: Response): Promise<AuthenticatedAccount> => {
    const { account, key } = await countingFailures(limitFailures, req, res, () =>
      verifyAccountKey(apiKeyOf(req.headers['x-api-key']), clock.now(), async (digest) => {
        const named = await views.get(accountKeyView, digest);
        return named ? views.get(recipientAccountView, named.accountId) : undefined;
      }),
    );
    const limit = await limitAccount(req, res, account.accountId);
    if (limit.outcome === 'limited') throw limit.refusal;
    return { account, clientAddress: addressOf(req), key };
  };
}
