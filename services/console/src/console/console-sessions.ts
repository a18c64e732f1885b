import { randomBytes, timingSafeEqual } from 'node:crypto';
import { compactDecrypt, CompactEncrypt } from 'jose';
import type { SecretSpec } from '@rsd/ports';
import type { Clock } from '@rsd/ports';

/** Who is signed in to the console, and for which organization (decision 31). */
export interface ConsoleIdentity {
  organizationId: string;
  /** The identity provider's subject, or `one-time-link` for the embedded runtime's printed link. */
  subject: string;
  /** The person's own issuer (decision 51): the identity provider's `iss`, or the development link's. */
  issuer: string;
  /** What the person may do, space-separated: the scope of the console's tokens for them. */
  scope: string;
  /** A name to show ("Signed in as …"); never used for a decision. */
  displayName: string;
}

export interface ConsoleSession extends ConsoleIdentity {
  /** The synchronizer token every form of this session carries (CSRF). */
  csrfToken: string;
}

/** What the callback needs to finish an OpenID Connect sign-in it began: sealed, so the browser holds it but cannot read it. */
export interface SignInAttempt {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export const CONSOLE_LIMITS = {
  /** A session unused this long ends. */
  idleMs: 30 * 60_000,
  /** A session ends this long after sign-in whatever its use. */
  absoluteMs: 8 * 60 * 60_000,
  /** Between the redirect to the identity provider and its callback. */
  attemptMs: 10 * 60_000,
  /** Decision 31: the printed sign-in link works once, for 10 minutes. */
  linkMs: 10 * 60_000,
} as const;

/** The issuer the development sign-in link names for the person it signs in (decision 51's `person_iss`). */
export const SIGN_IN_LINK_ISSUER = 'urn:rsd:console:sign-in-link';

/** The key that seals the console's cookies and links: 32 random bytes, base64url (AES-256-GCM). */
export const CONSOLE_SESSION_KEY: SecretSpec = {
  variable: 'CONSOLE_SESSION_KEY',
  file: 'console-session-key',
  generate: () => randomBytes(32).toString('base64url'),
  requiredBecause: "the console seals its sessions with it; every replica holds the same one, so a session outlives its replica's loss",
};

export interface ConsoleSessions {
  /** A new session with a new identifier, whatever the browser held before (no session fixation). */
  start(identity: ConsoleIdentity): Promise<{ cookie: string; session: ConsoleSession }>;
  /**
   * The session, if the cookie is one this console sealed and it is neither idle too long nor too old;
   * with the cookie that records this use (idle time starts again from it, never past 8 hours).
   */
  find(cookie: string | undefined): Promise<{ session: ConsoleSession; cookie: string } | undefined>;
  end(cookie: string | undefined): Promise<void>;
  beginAttempt(attempt: SignInAttempt): Promise<string>;
  /** The attempt, once: a replayed or expired callback finds nothing. */
  takeAttempt(cookie: string | undefined): Promise<SignInAttempt | undefined>;
  issueLink(identity: ConsoleIdentity): Promise<string>;
  /** The link's identity, once, within 10 minutes of issue. */
  redeemLink(token: string | undefined): Promise<ConsoleIdentity | undefined>;
}

type Kind = 'session' | 'attempt' | 'link';
interface Sealed {
  kind: Kind;
  /** This session's, attempt's or link's own id. */
  id: string;
  createdAt: number;
  expiresAt: number;
  value: Record<string, string>;
}

/**
 * The console's rules for its state (decision 31) with no store (decision 51): a session, a sign-in
 * attempt and a sign-in link are each sealed (AES-256-GCM, JWE `dir`) with the console's key into the
 * value the browser holds. Any replica with the same key opens them, so a session outlives its replica.
 * What must happen once (a link redeemed, an attempt taken, a session ended) is remembered in memory
 * until the sealed value expires: on the embedded runtime's one console process that is exact; across
 * replicas a signed-out session's cookie still opens on another replica until its idle expiry (30
 * minutes), which the browser no longer holds.
 */
export function createConsoleSessions(clock: Clock, sessionKey: string): ConsoleSessions {
  const key = sessionKeyOf(sessionKey);
  const now = () => clock.now().getTime();
  const spent = new Map<string, number>();
  const spend = (sealed: Sealed) => {
    const at = now();
    for (const [id, until] of spent) if (until <= at) spent.delete(id);
    spent.set(sealed.id, Math.max(sealed.expiresAt, sealed.createdAt + CONSOLE_LIMITS.absoluteMs));
  };

  const seal = async (sealed: Sealed) =>
    new CompactEncrypt(new TextEncoder().encode(JSON.stringify(sealed))).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).encrypt(key);
  const open = async (kind: Kind, value: string | undefined): Promise<Sealed | undefined> => {
    if (!value || value.length > 8192) return undefined;
    try {
      const { plaintext } = await compactDecrypt(value, key, {
        keyManagementAlgorithms: ['dir'],
        contentEncryptionAlgorithms: ['A256GCM'],
      });
      const sealed = JSON.parse(new TextDecoder().decode(plaintext)) as Sealed;
      if (sealed.kind !== kind || spent.has(sealed.id)) return undefined;
      if (now() >= sealed.expiresAt) {
        // Refused once for its age, refused for good: a clock set back does not revive it.
        spend(sealed);
        return undefined;
      }
      return sealed;
    } catch {
      return undefined;
    }
  };
  const issue = (kind: Kind, value: Record<string, string>, lifetimeMs: number) => {
    const at = now();
    return seal({ kind, id: newSecret(), createdAt: at, expiresAt: at + lifetimeMs, value });
  };
  const take = async (kind: 'attempt' | 'link', value: string | undefined) => {
    const sealed = await open(kind, value);
    if (sealed) spend(sealed);
    return sealed?.value;
  };

  return {
    async start(identity) {
      const session = { ...identity, csrfToken: newSecret() };
      return { cookie: await issue('session', { ...session }, CONSOLE_LIMITS.idleMs), session };
    },
    async find(cookie) {
      const sealed = await open('session', cookie);
      const session = sealed && sessionOf(sealed.value);
      if (!sealed || !session) return undefined;
      // Idle time starts again from this use, never past 8 hours from sign-in.
      const renewed = { ...sealed, expiresAt: Math.min(now() + CONSOLE_LIMITS.idleMs, sealed.createdAt + CONSOLE_LIMITS.absoluteMs) };
      return { session, cookie: await seal(renewed) };
    },
    end: async (cookie) => {
      const sealed = await open('session', cookie);
      if (sealed) spend(sealed);
    },
    beginAttempt: (attempt) => issue('attempt', { ...attempt }, CONSOLE_LIMITS.attemptMs),
    takeAttempt: async (cookie) => {
      const value = await take('attempt', cookie);
      return value && typeof value.state === 'string' && typeof value.nonce === 'string' && typeof value.codeVerifier === 'string'
        ? { state: value.state, nonce: value.nonce, codeVerifier: value.codeVerifier }
        : undefined;
    },
    issueLink: (identity) => issue('link', { ...identity }, CONSOLE_LIMITS.linkMs),
    redeemLink: async (token) => {
      const value = await take('link', token);
      return value && identityOf(value);
    },
  };
}

/** CONSOLE_SESSION_KEY as the 32 bytes it must be. */
export function sessionKeyOf(value: string): Uint8Array {
  const key = Buffer.from(value.trim(), 'base64url');
  if (key.length !== 32) throw new Error('must be 32 bytes, base64url');
  return new Uint8Array(key);
}

/** Constant-time comparison of a submitted CSRF token with the session's. */
export function sameToken(submitted: unknown, expected: string): boolean {
  if (typeof submitted !== 'string') return false;
  const left = Buffer.from(submitted, 'utf8');
  const right = Buffer.from(expected, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A sealed value read back as what it was written from: anything incomplete is no identity at all. */
function identityOf(value: Record<string, string>): ConsoleIdentity | undefined {
  const { organizationId, subject, issuer, scope, displayName } = value;
  if (organizationId === undefined || subject === undefined || issuer === undefined || scope === undefined || displayName === undefined)
    return undefined;
  return { organizationId, subject, issuer, scope, displayName };
}

function sessionOf(value: Record<string, string>): ConsoleSession | undefined {
  const identity = identityOf(value);
  return identity && value.csrfToken !== undefined ? { ...identity, csrfToken: value.csrfToken } : undefined;
}

const newSecret = () => randomBytes(32).toString('base64url');
