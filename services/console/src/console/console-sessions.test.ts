import {
  CONSOLE_LIMITS,
  CONSOLE_SESSION_KEY,
  createConsoleSessions,
  sameToken,
  type ConsoleIdentity,
  type ConsoleSessions,
  type SignInAttempt,
} from './console-sessions';

const NOW = new Date('2026-11-20T10:00:00.000Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const ADMIN: ConsoleIdentity = {
  organizationId: 'acme',
  subject: 'idp|1234',
  issuer: 'https://idp.example',
  scope: 'authorizations:write',
  displayName: 'Ada Admin',
};
const ATTEMPT = { state: 'state-1', nonce: 'nonce-1', codeVerifier: 'verifier-1' };

describe('console sessions', () => {
  let current: Date;
  let sessions: ConsoleSessions;
  const clock = { now: () => current };
  const advance = (ms: number) => {
    current = new Date(current.getTime() + ms);
  };

  beforeEach(() => {
    current = NOW;
    sessions = createConsoleSessions(clock, CONSOLE_SESSION_KEY.generate());
  });

  /** The session a cookie opens, without the renewed cookie. */
  const find = async (cookie: string | undefined) => (await sessions.find(cookie))?.session;
  /** A browser holding a session's cookie: each use stores the renewed one, as the browser does. */
  const browserWith = (cookie: string) => {
    let held = cookie;
    return async () => {
      const found = await sessions.find(held);
      if (found) held = found.cookie;
      return found?.session;
    };
  };

  // Sign-in attempts and one-time links are both single-use tokens with a lifetime, so they age by the same rules.
  interface SingleUse<T> {
    lifetimeMs: number;
    issue(value: T): Promise<string>;
    use(token: string): Promise<T | undefined>;
  }
  const attempts: SingleUse<SignInAttempt> = {
    lifetimeMs: CONSOLE_LIMITS.attemptMs,
    issue: (attempt) => sessions.beginAttempt(attempt),
    use: (cookie) => sessions.takeAttempt(cookie),
  };
  const links: SingleUse<ConsoleIdentity> = {
    lifetimeMs: CONSOLE_LIMITS.linkMs,
    issue: (identity) => sessions.issueLink(identity),
    use: (token) => sessions.redeemLink(token),
  };

  /** A token for `early` still works just under its lifetime; one for `late`, issued with it, no longer at its lifetime. */
  async function expectLastsItsLifetime<T>(kind: SingleUse<T>, early: T, late: T): Promise<void> {
    const earlyToken = await kind.issue(early);
    const lateToken = await kind.issue(late);

    advance(kind.lifetimeMs - 1);
    expect(await kind.use(earlyToken)).toEqual(early);

    advance(1);
    expect(await kind.use(lateToken)).toBeUndefined();
  }

  /** A token refused `ageMs` after issue is still refused once the clock is back at its issue. */
  async function expectStaysRefused<T>(kind: SingleUse<T>, value: T, ageMs: number): Promise<void> {
    const token = await kind.issue(value);
    advance(ageMs);
    expect(await kind.use(token)).toBeUndefined();

    current = NOW;
    expect(await kind.use(token)).toBeUndefined();
  }

  describe('sessions', () => {
    test('when a session starts, then its cookie finds the identity with a CSRF token, and no other value does', async () => {
      const { cookie, session } = await sessions.start(ADMIN);

      expect(session).toEqual({ ...ADMIN, csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
      // Sealed with the console's key (decision 51): the session itself, encrypted, and nothing to look up.
      expect(cookie).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      expect(cookie).not.toBe(session.csrfToken);
      expect(await find(cookie)).toEqual(session);
      expect(await find(undefined)).toBeUndefined();
      expect(await find('')).toBeUndefined();
      expect(await find(`${cookie}x`)).toBeUndefined();
      expect(await find(session.csrfToken)).toBeUndefined();
    });

    test('when the same identity signs in twice, then each start has a new cookie and a new CSRF token, and both sessions stand apart', async () => {
      const first = await sessions.start(ADMIN);
      const second = await sessions.start(ADMIN);

      expect(second.cookie).not.toBe(first.cookie);
      expect(second.session.csrfToken).not.toBe(first.session.csrfToken);
      expect((await find(first.cookie))?.csrfToken).toBe(first.session.csrfToken);
      expect((await find(second.cookie))?.csrfToken).toBe(second.session.csrfToken);
    });

    test('when a session is unused for just under 30 minutes, then it still works; at 30 minutes it has ended', async () => {
      const { cookie } = await sessions.start(ADMIN);

      advance(CONSOLE_LIMITS.idleMs - 1);
      expect(await find(cookie)).toMatchObject(ADMIN);

      advance(CONSOLE_LIMITS.idleMs);
      expect(await find(cookie)).toBeUndefined();
    });

    test('when a session ended idle, then it stays ended even if the clock goes back', async () => {
      const { cookie } = await sessions.start(ADMIN);
      advance(30 * MINUTE);
      expect(await find(cookie)).toBeUndefined();

      current = NOW;
      expect(await find(cookie)).toBeUndefined();
    });

    test('when a session is used every 20 minutes, then it lasts until 8 hours after sign-in and not a moment longer', async () => {
      const use = browserWith((await sessions.start(ADMIN)).cookie);

      for (let elapsed = 20 * MINUTE; elapsed < 8 * HOUR; elapsed += 20 * MINUTE) {
        current = new Date(NOW.getTime() + elapsed);
        expect(await use()).toMatchObject(ADMIN);
      }
      current = new Date(NOW.getTime() + CONSOLE_LIMITS.absoluteMs - 1);
      expect(await use()).toMatchObject(ADMIN);

      current = new Date(NOW.getTime() + CONSOLE_LIMITS.absoluteMs);
      expect(await use()).toBeUndefined();
    });

    test('when a session is used, then its idle time starts again from that use', async () => {
      const { cookie } = await sessions.start(ADMIN);
      const use = browserWith(cookie);

      advance(25 * MINUTE);
      expect(await use()).toBeDefined();
      advance(25 * MINUTE);
      expect(await use()).toBeDefined();
      // The cookie as first set has idled 50 minutes: only the renewed one still opens the session.
      expect(await find(cookie)).toBeUndefined();
      advance(30 * MINUTE);
      expect(await use()).toBeUndefined();
    });

    test('when a session is ended, then its cookie finds nothing and other sessions go on', async () => {
      const ended = await sessions.start(ADMIN);
      const other = await sessions.start({ ...ADMIN, subject: 'idp|other' });

      await sessions.end(ended.cookie);

      expect(await find(ended.cookie)).toBeUndefined();
      expect(await find(other.cookie)).toMatchObject({ subject: 'idp|other' });
    });

    test('when end is given no cookie or an unknown one, then nothing happens', async () => {
      const { cookie } = await sessions.start(ADMIN);

      await sessions.end(undefined);
      await sessions.end('');
      await sessions.end('not-a-session');

      expect(await find(cookie)).toMatchObject(ADMIN);
    });
  });

  test('when another console instance holds the same key, then it opens the session: a replica lost loses no session', async () => {
    const { cookie, session } = await sessions.start(ADMIN);
    const key = CONSOLE_SESSION_KEY.generate();
    const first = createConsoleSessions(clock, key);
    const replica = createConsoleSessions(clock, key);
    const started = await first.start(ADMIN);

    expect((await replica.find(started.cookie))?.session).toEqual(started.session);
    // Another key (another deployment) opens nothing.
    expect(await replica.find(cookie)).toBeUndefined();
    expect(await find(cookie)).toEqual(session);
  });

  describe('sign-in attempts', () => {
    test('when an attempt is taken, then it comes back once and a replay finds nothing', async () => {
      const cookie = await sessions.beginAttempt(ATTEMPT);

      expect(await sessions.takeAttempt(cookie)).toEqual(ATTEMPT);
      expect(await sessions.takeAttempt(cookie)).toBeUndefined();
    });

    test('when an attempt is taken just under 10 minutes after it began, then it comes back; at 10 minutes it has expired', () =>
      expectLastsItsLifetime(attempts, ATTEMPT, { ...ATTEMPT, state: 'state-2' }));

    test('when an expired attempt was refused, then it stays refused', () => expectStaysRefused(attempts, ATTEMPT, 10 * MINUTE));

    test('when no cookie or an unknown one is given, then no attempt is found', async () => {
      await sessions.beginAttempt(ATTEMPT);

      expect(await sessions.takeAttempt(undefined)).toBeUndefined();
      expect(await sessions.takeAttempt('')).toBeUndefined();
      expect(await sessions.takeAttempt('forged')).toBeUndefined();
    });

    test('when an attempt begins, then its cookie is not a session cookie and a session cookie is not an attempt', async () => {
      const attemptCookie = await sessions.beginAttempt(ATTEMPT);
      const { cookie: sessionCookie } = await sessions.start(ADMIN);

      expect(await sessions.find(attemptCookie)).toBeUndefined();
      expect(await sessions.takeAttempt(sessionCookie)).toBeUndefined();
      expect(await sessions.takeAttempt(attemptCookie)).toEqual(ATTEMPT);
    });
  });

  describe('one-time sign-in links (decision 31)', () => {
    test('when a link is redeemed, then it gives its identity once and a second use is refused', async () => {
      const token = await sessions.issueLink({ ...ADMIN, subject: 'one-time-link', displayName: 'x' });

      expect(await sessions.redeemLink(token)).toEqual({ ...ADMIN, subject: 'one-time-link', displayName: 'x' });
      expect(await sessions.redeemLink(token)).toBeUndefined();
    });

    test('when a link is redeemed just under 10 minutes after issue, then it works; at 10 minutes it is refused', () =>
      expectLastsItsLifetime(links, ADMIN, ADMIN));

    test('when a link is refused for its age, then it stays refused even if the clock goes back', () =>
      expectStaysRefused(links, ADMIN, 11 * MINUTE));

    test('when each link is issued, then its token is new, and a token that was not issued redeems nothing', async () => {
      const first = await sessions.issueLink(ADMIN);
      const second = await sessions.issueLink(ADMIN);

      expect(first).not.toBe(second);
      // Sealed like a session (decision 51): the link carries its identity, encrypted, and works on any replica with the key.
      expect(first).toMatch(/^[A-Za-z0-9_.-]+$/);
      expect(await sessions.redeemLink(undefined)).toBeUndefined();
      expect(await sessions.redeemLink('')).toBeUndefined();
      expect(await sessions.redeemLink(first.slice(0, -1))).toBeUndefined();
      expect(await sessions.redeemLink(first)).toEqual(ADMIN);
      expect(await sessions.redeemLink(second)).toEqual(ADMIN);
    });

    test('when a link is redeemed, then it is not a session cookie by itself', async () => {
      const token = await sessions.issueLink(ADMIN);

      expect(await sessions.find(token)).toBeUndefined();
    });
  });
});

describe('sameToken (the CSRF comparison)', () => {
  const EXPECTED = 'Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWpr';

  test('when the submitted token is the same, then it matches', () => {
    expect(sameToken(EXPECTED.split('').join(''), EXPECTED)).toBe(true);
  });

  test('when the submitted token differs in one character, then it does not match', () => {
    const wrong = `${EXPECTED.slice(0, -1)}${EXPECTED.endsWith('A') ? 'B' : 'A'}`;

    expect(wrong).toHaveLength(EXPECTED.length);
    expect(sameToken(wrong, EXPECTED)).toBe(false);
  });

  test('when the submitted token is longer, shorter or empty, then it does not match and nothing throws', () => {
    expect(sameToken(`${EXPECTED}x`, EXPECTED)).toBe(false);
    expect(sameToken(EXPECTED.slice(1), EXPECTED)).toBe(false);
    expect(sameToken('', EXPECTED)).toBe(false);
  });

  test('when the submitted token has as many characters but more bytes, then it does not match and nothing throws', () => {
    const multibyte = `${EXPECTED.slice(0, -1)}é`;

    expect(multibyte).toHaveLength(EXPECTED.length);
    expect(() => sameToken(multibyte, EXPECTED)).not.toThrow();
    expect(sameToken(multibyte, EXPECTED)).toBe(false);
  });

  test('when the submitted value is not a string, then it does not match, even an array holding the token', () => {
    for (const submitted of [undefined, null, 0, 42, true, [EXPECTED], { toString: () => EXPECTED }, Buffer.from(EXPECTED)]) {
      expect(sameToken(submitted, EXPECTED)).toBe(false);
    }
  });
});
