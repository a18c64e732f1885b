import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '@rsd/ports';

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
  /** Each table is bounded: past this, the oldest entry goes (memory never grows with traffic). */
  maxEntries: 10_000,
} as const;

interface Stamped<T> {
  value: T;
  createdAt: number;
  lastSeenAt: number;
}

export interface ConsoleSessions {
  /** A new session with a new identifier, whatever the browser held before (no session fixation). */
  start(identity: ConsoleIdentity): { cookie: string; session: ConsoleSession };
  find(cookie: string | undefined): ConsoleSession | undefined;
  end(cookie: string | undefined): void;
  beginAttempt(attempt: SignInAttempt): string;
  /** The attempt, once: a replayed or expired callback finds nothing. */
  takeAttempt(cookie: string | undefined): SignInAttempt | undefined;
  issueLink(identity: ConsoleIdentity): string;
  /** The link's identity, once, within 10 minutes of issue. */
  redeemLink(token: string | undefined): ConsoleIdentity | undefined;
}

/**
 * Server-side state of the console, in this process's memory. Only digests of the secrets the browser
 * holds (session cookie, attempt cookie, link token) are kept, so the table itself opens nothing.
 */
export function createConsoleSessions(clock: Clock, limits = CONSOLE_LIMITS): ConsoleSessions {
  const sessions = new BoundedTable<ConsoleSession>(limits.maxEntries);
  const attempts = new BoundedTable<SignInAttempt>(limits.maxEntries);
  const links = new BoundedTable<ConsoleIdentity>(limits.maxEntries);
  const now = () => clock.now().getTime();

  return {
    start(identity) {
      const cookie = newSecret();
      const session = { ...identity, csrfToken: newSecret() };
      sessions.put(cookie, session, now());
      return { cookie, session };
    },
    find(cookie) {
      const at = now();
      const entry = cookie ? sessions.get(cookie) : undefined;
      if (!cookie || !entry) return undefined;
      if (at - entry.lastSeenAt >= limits.idleMs || at - entry.createdAt >= limits.absoluteMs) {
        sessions.delete(cookie);
        return undefined;
      }
      sessions.touch(cookie, at);
      return entry.value;
    },
    end: (cookie) => sessions.delete(cookie),
    beginAttempt(attempt) {
      const cookie = newSecret();
      attempts.put(cookie, attempt, now());
      return cookie;
    },
    takeAttempt: (cookie) => takeOnce(attempts, cookie, now(), limits.attemptMs),
    issueLink(identity) {
      const token = newSecret();
      links.put(token, identity, now());
      return token;
    },
    redeemLink: (token) => takeOnce(links, token, now(), limits.linkMs),
  };
}

/** Constant-time comparison of a submitted CSRF token with the session's. */
export function sameToken(submitted: unknown, expected: string): boolean {
  if (typeof submitted !== 'string') return false;
  const left = Buffer.from(submitted, 'utf8');
  const right = Buffer.from(expected, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

function takeOnce<T>(table: BoundedTable<T>, secret: string | undefined, at: number, lifetimeMs: number): T | undefined {
  const entry = table.get(secret);
  if (!entry) return undefined;
  table.delete(secret);
  return at - entry.createdAt < lifetimeMs ? entry.value : undefined;
}

const newSecret = () => randomBytes(32).toString('base64url');
const digestOf = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('base64url');

/** A Map keyed by secret digests, in least-recently-used order, never larger than its bound. */
class BoundedTable<T> {
  private readonly entries = new Map<string, Stamped<T>>();

  constructor(private readonly maxEntries: number) {}

  put(secret: string, value: T, at: number): void {
    this.entries.set(digestOf(secret), { value, createdAt: at, lastSeenAt: at });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  get(secret: string | undefined): Stamped<T> | undefined {
    return secret ? this.entries.get(digestOf(secret)) : undefined;
  }

  touch(secret: string, at: number): void {
    const key = digestOf(secret);
    const entry = this.entries.get(key);
    if (!entry) return;
    // Re-inserted, so the Map's order stays least recently used first.
    this.entries.delete(key);
    this.entries.set(key, { ...entry, lastSeenAt: at });
  }

  delete(secret: string | undefined): void {
    if (secret) this.entries.delete(digestOf(secret));
  }
}
