import type { Scope } from '@rsd/contracts';
import { timingSafeEqual } from 'node:crypto';
import { apiKeyDigestBytes } from '../credential-formats';
import type { RecipientAccountView } from '../views/account-views';
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
 * Which of a holder's keys a presented key is: its current key, or the previous one within a
 * rotation's overlap. The previous key only reads (decision 50): whatever manages asks for the current.
 */
export type KeyMatch = 'current' | 'previous';

export type AccessOutcome =
  | { outcome: 'refused'; code: AuthenticationRefusal }
  | { outcome: 'granted'; credential: CredentialView; key: KeyMatch }
  | { outcome: 'forbidden'; code: 'INSUFFICIENT_SCOPE'; credential: CredentialView };

/**
 * Steps 5 to 7 and 9, given what the one lookup found. The credential's rate limit (step 8) sits
 * between authentication and the scope, so an authenticated caller without the scope is told apart
 * from a refused one: the caller applies the limit to both `granted` and `forbidden`.
 */
export function checkAccess(
  caller: IdentifiedCaller,
  credential: CredentialView | undefined,
  /** Step 9; undefined where a route needs no scope (the notifier's subscriptions). */
  scope: Scope | undefined,
  now: Date,
): AccessOutcome {
  if (!credential) return { outcome: 'refused', code: 'CREDENTIAL_NOT_FOUND' };
  const key = keyMatchOf(caller.apiKey, credential, now);
  if (key === undefined) return { outcome: 'refused', code: 'INVALID_API_KEY' };
  return activeWithScope(credential, scope, now, key);
}

/**
 * Decision 42: steps 5 to 7 and 9 for an account key presented for one of the account's grants: the
 * same checks and codes the grant's own key would get, and INVALID_API_KEY for a grant the account
 * does not hold (so a key tells nothing about grants it cannot read).
 */
export function checkAccountAccess(
  caller: IdentifiedCaller,
  credential: CredentialView | undefined,
  account: RecipientAccountView | undefined,
  scope: Scope | undefined,
  now: Date,
): AccessOutcome {
  if (!credential) return { outcome: 'refused', code: 'CREDENTIAL_NOT_FOUND' };
  const holds = account !== undefined && credential.recipientAccountId === account.accountId;
  // Compared whether or not the account holds the grant, so the timing does not say which it was.
  const key = keyMatchOf(caller.apiKey, account ?? NO_KEYS, now);
  if (!holds || key === undefined) return { outcome: 'refused', code: 'INVALID_API_KEY' };
  return activeWithScope(credential, scope, now, key);
}

/** Steps 7 and 9, the same for a grant's own key and an account's, once the key verified. */
function activeWithScope(credential: CredentialView, scope: Scope | undefined, now: Date, key: KeyMatch): AccessOutcome {
  if (!isActive(credential, now)) return { outcome: 'refused', code: 'CREDENTIAL_INACTIVE' };
  if (scope !== undefined && !credential.scopes.includes(scope)) return { outcome: 'forbidden', code: 'INSUFFICIENT_SCOPE', credential };
  return { outcome: 'granted', credential, key };
}

/**
 * Decision 42: which of the account's keys an account key is (its current one, or its previous one
 * within the overlap), or undefined when it is neither.
 */
export function accountKeyMatch(apiKey: string, account: RecipientAccountView, now: Date): KeyMatch | undefined {
  return keyMatchOf(apiKey, account, now);
}

/** The digests a key is checked against: a credential's or a recipient account's. */
interface KeyHolder {
  keyDigest: string | null;
  previousKeyDigest?: string | null;
  previousKeyExpiresAt?: string | null;
}

const NO_KEYS: KeyHolder = { keyDigest: null };

/**
 * The current key, or during a rotation's overlap the previous one (decision 19), checked at request
 * time like expiry: no event is needed to end the overlap. Both digests are compared in constant
 * time, whichever matches, so the timing tells nothing about which key was presented; the answer
 * names which it was (a string literal: the read path allocates nothing more for it).
 *
 * The key's checksum is not checked first: only a key this service issued has a stored digest, and
 * every one of them carries a valid checksum, so a key that fails it can never match, and the answer
 * (INVALID_API_KEY) is the same. Checking it cost every good request more than it saved a mistyped one.
 */
function keyMatchOf(apiKey: string, credential: KeyHolder, now: Date): KeyMatch | undefined {
  const digest = apiKeyDigestBytes(apiKey);
  const stored = storedDigestsOf(credential);
  const current = timingSafeEqual(digest, stored.current);
  const previous = timingSafeEqual(digest, stored.previous);
  const inOverlap = credential.previousKeyExpiresAt != null && now.toISOString() < credential.previousKeyExpiresAt;
  if (current) return 'current';
  return previous && inOverlap ? 'previous' : undefined;
}

/**
 * No key yet (an unclaimed claim link, decision 38), or no previous key: compared all the same,
 * against a digest no key has, so that the comparison costs the same.
 */
const NO_DIGEST = Buffer.alloc(32);

/**
 * The stored digests as bytes, decoded once per view: the views are immutable, and a replica reads
 * the same object while the credential is unchanged, so the request path does not decode them per request.
 */
const storedDigests = new WeakMap<KeyHolder, { current: Buffer; previous: Buffer }>();

function storedDigestsOf(credential: KeyHolder): { current: Buffer; previous: Buffer } {
  let digests = storedDigests.get(credential);
  if (!digests) {
    digests = { current: digestBytes(credential.keyDigest), previous: digestBytes(credential.previousKeyDigest) };
    storedDigests.set(credential, digests);
  }
  return digests;
}

/** A stored hex digest as 32 bytes; anything else (none, or malformed) as NO_DIGEST, which matches no key. */
function digestBytes(hex: string | null | undefined): Buffer {
  const bytes = hex ? Buffer.from(hex, 'hex') : NO_DIGEST;
  return bytes.length === NO_DIGEST.length ? bytes : NO_DIGEST;
}
