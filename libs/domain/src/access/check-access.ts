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
  /** Step 9; undefined where a route needs no scope (the notifier's subscriptions). */
  scope: Scope | undefined,
  now: Date,
  rules: CredentialFormatRules,
): AccessOutcome {
  if (!credential) return { outcome: 'refused', code: 'CREDENTIAL_NOT_FOUND' };
  if (!keyVerifies(caller.apiKey, credential, now, rules)) return { outcome: 'refused', code: 'INVALID_API_KEY' };
  if (!isActive(credential, now)) return { outcome: 'refused', code: 'CREDENTIAL_INACTIVE' };
  if (scope !== undefined && !credential.scopes.includes(scope)) return { outcome: 'forbidden', code: 'INSUFFICIENT_SCOPE', credential };
  return { outcome: 'granted', credential };
}

/**
 * The current key, or during a rotation's overlap the previous one (decision 19), checked at request
 * time like expiry: no event is needed to end the overlap. The checksum turns away a mistyped key
 * without hashing; both digests are compared in constant time, whichever matches, so the timing
 * tells nothing about which key was presented.
 */
function keyVerifies(apiKey: string, credential: CredentialView, now: Date, rules: CredentialFormatRules): boolean {
  if (!hasValidChecksum(apiKey, rules.apiKeyPrefix)) return false;
  const digest = digestApiKey(apiKey);
  // No key yet (an unclaimed claim link, decision 38): compared all the same, against a digest no key has.
  const current = digestsMatch(digest, credential.keyDigest ?? NO_DIGEST);
  const previous = digestsMatch(digest, credential.previousKeyDigest ?? NO_DIGEST);
  const inOverlap = credential.previousKeyExpiresAt != null && now.toISOString() < credential.previousKeyExpiresAt;
  return current || (previous && inOverlap);
}

/** Stands in for a missing previous key so that the comparison costs the same; no key's SHA-256 is all zeros in practice. */
const NO_DIGEST = '0'.repeat(64);
