import type { Scope } from '@rsd/contracts';
import { digestApiKey, digestsMatch, hasValidChecksum } from '../credential-formats';
import { isActive, type CredentialView } from '../views/credential-view';

/** The codes of the read API's order of checks (decision 6) that this module decides. */
export type IdentifyRefusal = 'MISSING_CLIENT_ID' | 'INVALID_CLIENT_ID' | 'MISSING_API_KEY';
export type AuthenticationRefusal = IdentifyRefusal | 'CREDENTIAL_NOT_FOUND' | 'INVALID_API_KEY' | 'CREDENTIAL_INACTIVE';

export interface RequestFacts {
  /** The Client ID path segment, percent-decoded; undefined when the path has none, null when it does not decode. */
  clientId: string | undefined | null;
  /** The `x-api-key` header as received; '' when absent. */
  apiKey: string;
}

export interface CredentialFormatRules {
  /** The anchored Client ID pattern for the deployment's prefix (decision 4). */
  clientIdPattern: RegExp;
  apiKeyPrefix: string;
}

/** Who the request says it is, once steps 2 to 4 passed: only this may be looked up. */
export interface IdentifiedCaller {
  readonly clientId: string;
  readonly apiKey: string;
}

export type IdentifyOutcome = { outcome: 'refused'; code: IdentifyRefusal } | { outcome: 'identified'; caller: IdentifiedCaller };

/**
 * Steps 2 to 4, before any lookup: a Client ID that is missing or malformed, or a missing key,
 * never reaches the credential store.
 */
export function identifyCaller(facts: RequestFacts, rules: CredentialFormatRules): IdentifyOutcome {
  const { clientId, apiKey } = facts;
  if (clientId === undefined || clientId?.trim() === '') return { outcome: 'refused', code: 'MISSING_CLIENT_ID' };
  if (clientId === null || !rules.clientIdPattern.test(clientId)) return { outcome: 'refused', code: 'INVALID_CLIENT_ID' };
  if (apiKey === '') return { outcome: 'refused', code: 'MISSING_API_KEY' };
  return { outcome: 'identified', caller: { clientId, apiKey } };
}

/**
 * Steps 5 to 7 and 9, given what the one lookup found. The credential's rate limit (step 8) sits
 * between authentication and the scope, so an authenticated caller without the scope is told apart
 * from a refused one: the caller applies the limit to both `granted` and `forbidden`.
 */
export type AccessOutcome =
  | { outcome: 'refused'; code: AuthenticationRefusal }
  | { outcome: 'granted'; credential: CredentialView }
  | { outcome: 'forbidden'; code: 'INSUFFICIENT_SCOPE'; credential: CredentialView };

export function checkAccess(
  caller: IdentifiedCaller,
  credential: CredentialView | undefined,
  scope: Scope,
  now: Date,
  rules: CredentialFormatRules,
): AccessOutcome {
  if (!credential) return { outcome: 'refused', code: 'CREDENTIAL_NOT_FOUND' };
  // The checksum turns away a mistyped key without hashing; the digest comparison is constant-time.
  const verifies = hasValidChecksum(caller.apiKey, rules.apiKeyPrefix) && digestsMatch(digestApiKey(caller.apiKey), credential.keyDigest);
  if (!verifies) return { outcome: 'refused', code: 'INVALID_API_KEY' };
  if (!isActive(credential, now)) return { outcome: 'refused', code: 'CREDENTIAL_INACTIVE' };
  if (!credential.scopes.includes(scope)) return { outcome: 'forbidden', code: 'INSUFFICIENT_SCOPE', credential };
  return { outcome: 'granted', credential };
}
