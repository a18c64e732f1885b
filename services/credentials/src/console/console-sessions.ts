import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock, ConsoleStateStore } from '@rsd/ports';

/** Who is signed in to the console, and for which organization (decision 31). */
export interface ConsoleIdentity {
  organizationId: string;
  /** The identity provider's subject, or `one-time-link` for the embedded runtime's printed link. */
  subject: string;
  /** A name to show ("Signed in as …"); never used for a decision. */
  displayName: string;
}

export interface ConsoleSession extends ConsoleIdentity {
  /** The synchronizer token every form of this session carries (CSRF). */
  csrfToken: string;
}

/** What the callback needs to finish an OpenID Connect sign-in it began: never sent to the browser. */
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

export interface ConsoleSessions {
  /** A new session with a new identifier, whatever the browser held before (no session fixation). */
  start(identity: ConsoleIdentity): Promise<{ cookie: string; session: ConsoleSession }>;
  /** The session, if the cookie names one that is neither idle too long nor too old; the use is recorded. */
  find(cookie: string | undefined): Promise<ConsoleSession | undefined>;
  end(cookie: string | undefined): Promise<void>;
  beginAttempt(attempt: SignInAttempt): Promise<string>;
  /** The attempt, once: a replayed or expired callback finds nothing. */
  takeAttempt(cookie: string | undefined): Promise<SignInAttempt | undefined>;
  issueLink(identity: ConsoleIdentity): Promise<string>;
  /** The link's identity, once, within 10 minutes of issue. */
  redeemLink(token: string | undefined): Promise<ConsoleIdentity | undefined>;
}

/**
 * The console's rules for its state (decision 31), over a store that keeps it: in memory on the
 * embedded runtime, in the credentials database where replicas share it. The store only ever sees
 * digests of the secrets the browser holds (session cookie, attempt cookie, link token).
 */
export function createConsoleSessions(clock: Clock, store: ConsoleStateStore): ConsoleSessions {
  const now = () => clock.now().getTime();
  const issue = async (kind: 'attempt' | 'link' | 'session', value: Record<string, string>, lifetimeMs: number) => {
    const secret = newSecret();
    const at = now();
    await store.put(kind, digestOf(secret), { value, createdAt: at, lastSeenAt: at, expiresAt: at + lifetimeMs });
    return secret;
  };
  const take = async (kind: 'attempt' | 'link', secret: string | undefined) =>
    secret ? (await store.take(kind, digestOf(secret), now()))?.value : undefined;

  return {
    async start(identity) {
      const session = { ...identity, csrfToken: newSecret() };
      return { cookie: await issue('session', { ...session }, CONSOLE_LIMITS.idleMs), session };
    },
    async find(cookie) {
      if (!cookie) return undefined;
      const at = now();
      const key = digestOf(cookie);
      const record = await store.get('session', key, at);
      const session = record && sessionOf(record.value);
      if (!record || !session) return undefined;
      // Idle time starts again from this use, never past 8 hours from sign-in.
      await store.touch('session', key, at, Math.min(at + CONSOLE_LIMITS.idleMs, record.createdAt + CONSOLE_LIMITS.absoluteMs));
      return session;
    },
    end: async (cookie) => {
      if (cookie) await store.delete('session', digestOf(cookie));
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

/** Constant-time comparison of a submitted CSRF token with the session's. */
export function sameToken(submitted: unknown, expected: string): boolean {
  if (typeof submitted !== 'string') return false;
  const left = Buffer.from(submitted, 'utf8');
  const right = Buffer.from(expected, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A stored record read back as what it was written from: anything incomplete is no identity at all. */
function identityOf(value: Record<string, string>): ConsoleIdentity | undefined {
  const { organizationId, subject, displayName } = value;
  if (organizationId === undefined || subject === undefined || displayName === undefined) return undefined;
  return { organizationId, subject, displayName };
}

function sessionOf(value: Record<string, string>): ConsoleSession | undefined {
  const identity = identityOf(value);
  return identity && value.csrfToken !== undefined ? { ...identity, csrfToken: value.csrfToken } : undefined;
}

const newSecret = () => randomBytes(32).toString('base64url');
const digestOf = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('base64url');
