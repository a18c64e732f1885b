import type { RequestHandler } from 'express';
import { ApiError, digestApiKey, digestsMatch, hasValidChecksum } from '@rsd/platform';
import type { Clock, CredentialView, CredentialViews } from '@rsd/ports';
import { requestContext } from './request-context';

export interface AuthenticateCredentialDeps {
  credentials: CredentialViews;
  clock: Clock;
  apiKeyPrefix: string;
}

/**
 * Steps 4 to 7 of the order of checks, with exactly one lookup: the key must be present, the
 * Client ID must have a credential, the key must verify against it, and the credential must be
 * active now.
 */
export function authenticateCredential({ credentials, clock, apiKeyPrefix }: AuthenticateCredentialDeps): RequestHandler {
  return async (req, res, next) => {
    const apiKey = apiKeyOf(req.headers['x-api-key']);
    assertKeyIsPresent(apiKey);
    const credential = await credentials.get(requestContext.clientId(res));
    assertCredentialExists(credential);
    assertKeyVerifies(apiKey, credential, apiKeyPrefix);
    assertCredentialIsActive(credential, clock.now());
    requestContext.setCredential(res, credential);
    next();
  };
}

/** Node joins a repeated header with ", ", so two keys arrive as one value that cannot verify. */
function apiKeyOf(header: string | string[] | undefined): string {
  return Array.isArray(header) ? header.join(', ') : (header ?? '');
}

function assertKeyIsPresent(apiKey: string): void {
  if (apiKey === '') throw new ApiError('MISSING_API_KEY', 'The x-api-key header is required');
}

function assertCredentialExists(credential: CredentialView | undefined): asserts credential is CredentialView {
  if (!credential) throw new ApiError('CREDENTIAL_NOT_FOUND', 'No credential exists for this Client ID');
}

/** The checksum turns away a mistyped key without hashing; the digest comparison is constant-time. */
function assertKeyVerifies(apiKey: string, credential: CredentialView, prefix: string): void {
  if (!hasValidChecksum(apiKey, prefix) || !digestsMatch(digestApiKey(apiKey), credential.keyDigest)) {
    throw new ApiError('INVALID_API_KEY', 'The API key is not valid for this Client ID');
  }
}

/** Expiry is enforced here too, so a credential stops at `expiresAt` even before its Expired event arrives. */
function assertCredentialIsActive(credential: CredentialView, now: Date): void {
  const expired = credential.expiresAt !== null && now.getTime() >= Date.parse(credential.expiresAt);
  if (credential.status !== 'active' || expired) {
    throw new ApiError('CREDENTIAL_INACTIVE', 'The credential has been revoked, has expired or is not active');
  }
}
