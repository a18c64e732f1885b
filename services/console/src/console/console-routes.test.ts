import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, get as httpGet } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { digestApiKey, hasValidChecksum } from '@rsd/domain';
import { UnavailableError } from '@rsd/platform';
import type { AuthorizationStore } from '@rsd/ports';
import { request, signToken } from '@rsd/testkit';
import { anAccessRecord, NOW } from '../../../../test/support/credentials-harness';
import { startConsole as startConsoleHarness, type ConsoleHarness } from '../testing/console-harness';
import { alertWebhookAccess, type AlertWebhookAccess } from './alert-webhooks';

const ORG = 'acme';
const OTHER_ORG = 'globex';
const MINUTE = 60_000;
const SESSION_COOKIE = 'rsd_console';
const FOREIGN_ORIGIN = 'https://attacker.example';
/** What a stack trace or an internal error leaves in a page. */
const INTERNALS = /\n\s*at [\w.<>]+ \(|\n\s*at [^\n]*\.[cm]?[jt]s:\d+:\d+|node_modules|\.ts:\d+|TypeError|ReferenceError|SQLITE/;

interface Harness extends ConsoleHarness {
  /** From now on the store's list fails with this error, as a database that went away would. */
  breakStore(error: Error): void;
}

/** The console's origin as people reach it, through a proxy that gives the service another Host. */
const PUBLIC_ORIGIN = 'https://console.acme.example';

/** The console against the credentials service over the embedded adapters in a temp dir, its sessions in the test's hands. */
async function startConsole(options: { alertWebhooks?: AlertWebhookAccess } = {}): Promise<Harness> {
  let failure: Error | undefined;
  const h = await startConsoleHarness({
    wrapStore: (store): AuthorizationStore => ({
      ...store,
      list: (organizationId) => (failure ? Promise.reject(failure) : store.list(organizationId)),
    }),
    publicUrl: PUBLIC_ORIGIN,
    alertWebhooks: options.alertWebhooks,
  });
  return {
    ...h,
    breakStore: (error) => {
      failure = error;
    },
  };
}

interface Page {
  status: number;
  headers: Headers;
  body: string;
  location: string | null;
  /** The value the response sets for the session cookie, if it sets one. */
  sessionCookie: string | undefined;
  /** The whole Set-Cookie line for the session cookie, attributes included. */
  sessionCookieLine: string | undefined;
}

type Form = Record<string, string | readonly string[]>;

interface Visit {
  cookie?: string;
  /** A POST of this form, urlencoded as a browser sends it. */
  form?: Form;
  /** Sent as they are; unless `bare`, a POST also carries what a browser sends on a same-origin form. */
  headers?: Record<string, string>;
  bare?: boolean;
}

const csrfOf = (body: string): string => {
  const match = /name="_csrf" value="([^"]+)"/.exec(body);
  if (!match?.[1]) throw new Error('the page has no CSRF field');
  return match[1];
};

const apiKeyOf = (body: string): string => {
  const match = /<code id="api-key" class="secret">([^<]+)<\/code>/.exec(body);
  if (!match?.[1]) throw new Error('the page shows no API key');
  return match[1];
};

const clientIdOf = (body: string): string => {
  const match = /<code id="client-id">([^<]+)<\/code>/.exec(body);
  if (!match?.[1]) throw new Error('the page shows no Client ID');
  return match[1];
};

const occurrences = (text: string, part: string) => text.split(part).length - 1;
/** The token with its last character changed: as long, never the same. */
const oneCharacterOff = (token: string) => `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;

describe('credentials service: the console (decisions 30-32)', () => {
  let h: Harness;

  beforeEach(async () => {
    h = await startConsole();
  });
  afterEach(() => h.close());

  /** One request as a browser would make it, never following a redirect; no page may show an internal. */
  async function visit(path: string, { cookie, form, headers = {}, bare = false }: Visit = {}): Promise<Page> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(form ?? {})) {
      for (const item of typeof value === 'string' ? [value] : value) body.append(name, item);
    }
    const browser = form && !bare ? { origin: h.app.baseUrl, 'sec-fetch-site': 'same-origin' } : {};
    const response = await request<string>(`${h.app.baseUrl}${path}`, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { ...browser, ...(cookie === undefined ? {} : { cookie: `${SESSION_COOKIE}=${cookie}` }), ...headers },
      ...(form ? { body } : {}),
    });
    expect(typeof response.body).toBe('string');
    expect(response.body).not.toMatch(INTERNALS);
    const sessionCookieLine = response.headers.getSetCookie().find((line) => line.startsWith(`${SESSION_COOKIE}=`));
    return {
      status: response.status,
      headers: response.headers,
      body: response.body,
      location: response.headers.get('location'),
      sessionCookie: sessionCookieLine?.slice(SESSION_COOKIE.length + 1).split(';')[0],
      sessionCookieLine,
    };
  }

  async function signIn(organizationId = ORG, cookie?: string): Promise<{ cookie: string; csrf: string }> {
    const token = await h.signInLink(organizationId);
    const answer = await visit(`/console/sign-in/link?token=${token}`, { cookie });
    expect(answer.status).toBe(303);
    expect(answer.location).toBe('/console');
    if (!answer.sessionCookie) throw new Error('the sign-in set no session cookie');
    const list = await visit('/console', { cookie: answer.sessionCookie });
    return { cookie: answer.sessionCookie, csrf: csrfOf(list.body) };
  }

  const validForm = (csrf: string): Form => ({
    _csrf: csrf,
    recipientType: 'insurance_provider',
    recipientName: 'Acme Insurance',
    scopes: ['qr_score', 'pillar_breakdown'],
    expiresAt: '',
    allowedCidrs: '',
  });

  /** The create form as the console's page sends it, with `changes` to the valid one. */
  const postCreate = (session: { cookie: string; csrf: string }, changes: Form) =>
    visit('/console/authorizations', { cookie: session.cookie, form: { ...validForm(session.csrf), ...changes } });

  async function createInConsole(session: { cookie: string; csrf: string }, form: Form = {}) {
    const page = await postCreate(session, form);
    expect(page.status).toBe(201);
    return { page, clientId: clientIdOf(page.body), apiKey: apiKeyOf(page.body) };
  }

  /** A download as the browser saves it: its status, headers and text, never parsed as a whole. */
  async function download(session: { cookie: string }, path: string): Promise<Pick<Page, 'status' | 'headers' | 'body'>> {
    const answer = await fetch(`${h.app.baseUrl}${path}`, { headers: { cookie: `${SESSION_COOKIE}=${session.cookie}` } });
    return { status: answer.status, headers: answer.headers, body: await answer.text() };
  }

  /** A download answered as a file of its type and name, never a page. */
  function expectAttachment(file: Pick<Page, 'status' | 'headers'>, type: RegExp, name: string): void {
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toMatch(type);
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="${name}"`);
  }

  /** An authorization created over the HTTP API with a bearer token, as another organization's administrator would. */
  async function createOverApi(organizationId: string): Promise<string> {
    const token = await signToken({ org: organizationId, scope: 'authorizations:write' });
    const created = await request(`${h.credentials.baseUrl}/v1/organizations/${organizationId}/authorizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'] }),
    });
    expect(created.status).toBe(201);
    return created.body.clientId as string;
  }

  describe('signing in', () => {
    test('when nobody is signed in, then /console is the sign-in page, saying the one-time link is the way in here', async () => {
      const page = await visit('/console');

      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.body).toContain('<h1>Sign in</h1>');
      expect(page.body).toContain('one-time sign-in link');
      expect(page.body).not.toContain('href="/console/sign-in"');
      expect(page.body).not.toContain('Sign out');
      expect(page.body).not.toContain('_csrf');
    });

    test('when nobody is signed in, then every protected page and change is a 303 to /console and nothing is created', async () => {
      const clientId = await createOverApi(ORG);
      const pages = [
        await visit('/console/authorizations/new'),
        await visit(`/console/authorizations/${clientId}`),
        await visit(`/console/authorizations/${clientId}/revoke`),
        await visit('/console/authorizations', { form: validForm('guess') }),
        await visit(`/console/authorizations/${clientId}/rotate`, { form: { _csrf: 'guess', overlapSeconds: '0' } }),
        await visit(`/console/authorizations/${clientId}/revoke`, { form: { _csrf: 'guess' } }),
        await visit('/console/sign-out', { form: { _csrf: 'guess' } }),
      ];

      expect(pages.map((page) => [page.status, page.location])).toEqual(pages.map(() => [303, '/console']));
      const stored = await h.store.list(ORG);
      expect(stored.map((record) => [record.clientId, record.revokedAt, record.revision])).toEqual([[clientId, null, 1]]);
    });

    test('when the one-time link is opened, then it signs in with an HttpOnly, SameSite=Lax cookie for /console and the list shows who', async () => {
      const token = await h.signInLink(ORG);

      const answer = await visit(`/console/sign-in/link?token=${token}`);

      expect(answer.status).toBe(303);
      expect(answer.location).toBe('/console');
      // Sealed (decision 51): the session itself, encrypted with the console's key (a compact JWE).
      expect(answer.sessionCookie).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      expect(answer.sessionCookie).not.toBe(token);
      const attributes = (answer.sessionCookieLine ?? '').split(';').map((part) => part.trim().toLowerCase());
      expect(attributes).toEqual(expect.arrayContaining(['path=/console', 'httponly', 'samesite=lax']));
      expect(attributes).not.toContain('secure');
      const list = await visit('/console', { cookie: answer.sessionCookie });
      expect(list.status).toBe(200);
      expect(list.body).toContain('<h1>Authorizations</h1>');
      expect(list.body).toContain('Signed in as <strong>x</strong> for <strong>acme</strong>');
      expect(list.body).toContain('No authorizations yet.');
    });

    test('when the one-time link is opened through a name other than loopback, then the session cookie is Secure', async () => {
      const token = await h.signInLink(ORG);
      const { port } = new URL(h.app.baseUrl);

      const setCookie = await new Promise<string[]>((resolve, reject) => {
        httpGet(
          { host: '127.0.0.1', port, path: `/console/sign-in/link?token=${token}`, headers: { host: 'console.acme.example' } },
          (response) => {
            response.resume();
            resolve(response.headers['set-cookie'] ?? []);
          },
        ).on('error', reject);
      });

      const line = setCookie.find((cookie) => cookie.startsWith(`${SESSION_COOKIE}=`)) ?? '';
      expect(line.split(';').map((part) => part.trim().toLowerCase())).toEqual(expect.arrayContaining(['secure', 'httponly']));
    });

    test('when the one-time link is opened a second time, then it is a 400 sign-in page and no session is set', async () => {
      const token = await h.signInLink(ORG);
      expect((await visit(`/console/sign-in/link?token=${token}`)).status).toBe(303);

      const again = await visit(`/console/sign-in/link?token=${token}`);

      expect(again.status).toBe(400);
      expect(again.body).toContain('This sign-in link has expired or was already used.');
      expect(again.body).toContain('<h1>Sign in</h1>');
      expect(again.sessionCookie).toBeUndefined();
    });

    test('when the one-time link is opened 10 minutes after it was issued, then it is a 400; just before, it works', async () => {
      const early = await h.signInLink(ORG);
      const late = await h.signInLink(ORG);

      h.clock.set(new Date(NOW.getTime() + 10 * MINUTE - 1));
      expect((await visit(`/console/sign-in/link?token=${early}`)).status).toBe(303);
      h.clock.set(new Date(NOW.getTime() + 10 * MINUTE));
      const expired = await visit(`/console/sign-in/link?token=${late}`);

      expect(expired.status).toBe(400);
      expect(expired.body).toContain('This sign-in link has expired or was already used.');
      expect(expired.sessionCookie).toBeUndefined();
    });

    test('when the link has no token, a made-up one or several, then it is a 400 and no session is set', async () => {
      const token = await h.signInLink(ORG);
      const pages = [
        await visit('/console/sign-in/link'),
        await visit('/console/sign-in/link?token='),
        await visit('/console/sign-in/link?token=made-up'),
        await visit(`/console/sign-in/link?token=${token}&token=${token}`),
      ];

      expect(pages.map((page) => [page.status, page.sessionCookie])).toEqual(pages.map(() => [400, undefined]));
    });

    test('when the session cookie comes percent-encoded, then its decoded value opens the session; a cookie of another name does not', async () => {
      const session = await signIn();
      const percentEncoded = [...session.cookie]
        .map((char) => `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)
        .join('');

      const encoded = await visit('/console', { headers: { cookie: `other=1; ${SESSION_COOKIE}=${percentEncoded}; last="x"` } });
      const otherName = await visit('/console', { headers: { cookie: `${SESSION_COOKIE}_old=${session.cookie}` } });

      expect(percentEncoded).not.toBe(session.cookie);
      expect(encoded.status).toBe(200);
      expect(encoded.body).toContain('Sign out');
      expect(otherName.body).toContain('<h1>Sign in</h1>');
    });

    test('when the browser brings a session cookie of its own choosing to sign-in, then the session is under a new value and the old one opens nothing', async () => {
      const planted = 'chosen-by-an-attacker-before-sign-in';

      const { cookie } = await signIn(ORG, planted);

      expect(cookie).not.toBe(planted);
      const withPlanted = await visit('/console', { cookie: planted });
      expect(withPlanted.body).toContain('<h1>Sign in</h1>');
      expect((await visit('/console/authorizations/new', { cookie: planted })).status).toBe(303);
      expect((await visit('/console/authorizations/new', { cookie })).status).toBe(200);
    });

    test('when someone signs in again carrying a live session, then a new session replaces it and the old cookie no longer works', async () => {
      const first = await signIn();

      const second = await signIn(ORG, first.cookie);

      expect(second.cookie).not.toBe(first.cookie);
      expect(second.csrf).not.toBe(first.csrf);
      expect((await visit('/console/authorizations/new', { cookie: first.cookie })).status).toBe(303);
      expect((await visit('/console/authorizations/new', { cookie: second.cookie })).status).toBe(200);
    });

    test('when a session is unused for 30 minutes, then the console asks to sign in again', async () => {
      const { cookie } = await signIn();
      h.clock.set(new Date(NOW.getTime() + 29 * MINUTE));
      expect((await visit('/console/authorizations/new', { cookie })).status).toBe(200);

      h.clock.set(new Date(NOW.getTime() + 59 * MINUTE));

      expect((await visit('/console/authorizations/new', { cookie })).status).toBe(303);
      expect((await visit('/console', { cookie })).body).toContain('<h1>Sign in</h1>');
    });
  });

  describe('headers and markup (decision 32)', () => {
    test('when any page is served, then it carries the strict CSP, no-store, DENY framing and nosniff, and loads nothing from elsewhere', async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);
      const created = await visit('/console/authorizations', { cookie: session.cookie, form: validForm(session.csrf) });
      const pages = [
        await visit('/console'),
        await visit('/console/sign-in/link?token=used'),
        await visit('/console/sign-in'),
        await visit('/console', { cookie: session.cookie }),
        await visit('/console/authorizations/new', { cookie: session.cookie }),
        created,
        await visit('/console/authorizations', { cookie: session.cookie, form: { _csrf: session.csrf } }),
        await visit('/console/authorizations', { cookie: session.cookie, form: { _csrf: 'wrong' } }),
        await visit(`/console/authorizations/${clientId}`, { cookie: session.cookie }),
        await visit(`/console/authorizations/${clientId}/revoke`, { cookie: session.cookie }),
        await visit(`/console/authorizations/${clientId}/rotate`, {
          cookie: session.cookie,
          form: { _csrf: session.csrf, overlapSeconds: '0' },
        }),
        await visit('/console/authorizations/rs_unknown', { cookie: session.cookie }),
        await visit('/console/no-such-page'),
      ];
      expect(pages.map((page) => page.status)).toEqual([200, 400, 404, 200, 200, 201, 400, 403, 200, 200, 200, 404, 404]);

      for (const page of pages) {
        const policy = (page.headers.get('content-security-policy') ?? '').split(';').map((directive) => directive.trim());
        expect(policy).toEqual(
          expect.arrayContaining([
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "frame-ancestors 'none'",
            "form-action 'self'",
          ]),
        );
        expect(policy.join(';')).not.toMatch(/unsafe-inline|unsafe-eval|\*|data:|https?:/);
        expect(page.headers.get('cache-control')).toBe('no-store');
        expect(page.headers.get('x-frame-options')).toBe('DENY');
        expect(page.headers.get('x-content-type-options')).toBe('nosniff');
        expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(page.body).toMatch(/^<!doctype html>/);
        // Nothing the policy would block (an error in the browser's console), and nothing from a CDN.
        expect(page.body).not.toMatch(/<script(?![^>]*\ssrc="\/console\/assets\/)/);
        expect(page.body).not.toMatch(/\sstyle=|\son[a-z]+=|javascript:/i);
        expect(page.body).not.toMatch(/(src|href|action)="(https?:)?\/\//);
      }
    });

    test('when a sign-in redirect is answered, then it carries the policy too', async () => {
      const token = await h.signInLink(ORG);
      const answer = await visit(`/console/sign-in/link?token=${token}`);

      expect(answer.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(answer.headers.get('cache-control')).toBe('no-store');
    });
  });

  describe('CSRF on every change (decision 31)', () => {
    const expectRefused = (page: Page) => {
      expect(page.status).toBe(403);
      expect(page.body).toContain('<h1>Form expired</h1>');
    };
    /** A valid create with the session's right CSRF token, sent with `how` (headers, and `bare` for no browser headers). */
    const createWithRightToken = (session: { cookie: string; csrf: string }, how: Pick<Visit, 'headers' | 'bare'> = {}) =>
      visit('/console/authorizations', { cookie: session.cookie, form: validForm(session.csrf), ...how });

    test('when a create has no _csrf, then it is a 403 and nothing is created', async () => {
      const session = await signIn();
      const { _csrf: _left, ...withoutToken } = validForm(session.csrf);

      expectRefused(await visit('/console/authorizations', { cookie: session.cookie, form: withoutToken }));

      expect(await h.store.list(ORG)).toEqual([]);
    });

    test("when a create has a wrong _csrf, or another session's, then it is a 403 and nothing is created", async () => {
      const session = await signIn();
      const otherSession = await signIn();

      expectRefused(await visit('/console/authorizations', { cookie: session.cookie, form: validForm(oneCharacterOff(session.csrf)) }));
      expectRefused(await visit('/console/authorizations', { cookie: session.cookie, form: validForm(otherSession.csrf) }));
      expectRefused(await postCreate(session, { _csrf: [session.csrf, session.csrf] }));

      expect(await h.store.list(ORG)).toEqual([]);
    });

    test('when a create with the right _csrf comes from a foreign Origin, then it is a 403 and nothing is created', async () => {
      const session = await signIn();

      expectRefused(await createWithRightToken(session, { headers: { origin: FOREIGN_ORIGIN } }));
      expectRefused(await createWithRightToken(session, { bare: true, headers: { origin: 'null' } }));

      expect(await h.store.list(ORG)).toEqual([]);
    });

    test('when a create with the right _csrf comes from the public origin (a proxy rewrote Host), then it is accepted', async () => {
      const session = await signIn();

      const page = await createWithRightToken(session, { bare: true, headers: { origin: PUBLIC_ORIGIN, 'sec-fetch-site': 'same-origin' } });

      expect(page.status).toBe(201);
      expect(await h.store.list(ORG)).toHaveLength(1);
    });

    test('when a create with the right _csrf is marked Sec-Fetch-Site cross-site (or same-site) without an Origin, then it is a 403 and nothing is created', async () => {
      const session = await signIn();

      for (const site of ['cross-site', 'same-site']) {
        expectRefused(await createWithRightToken(session, { bare: true, headers: { 'sec-fetch-site': site } }));
      }

      expect(await h.store.list(ORG)).toEqual([]);
    });

    test('when the same create comes with the right _csrf from this console, then it is accepted: the refusals above were the checks', async () => {
      const session = await signIn();

      const page = await createWithRightToken(session);

      expect(page.status).toBe(201);
      expect(await h.store.list(ORG)).toHaveLength(1);
    });

    test('when a form with the right _csrf names no origin, only Sec-Fetch-Site same-origin or nothing at all, then the token decides and it is accepted', async () => {
      const session = await signIn();

      const sameOriginOnly = await createWithRightToken(session, { bare: true, headers: { 'sec-fetch-site': 'same-origin' } });
      const neither = await createWithRightToken(session, { bare: true });

      expect([sameOriginOnly.status, neither.status]).toEqual([201, 201]);
      expect(await h.store.list(ORG)).toHaveLength(2);
    });
  });

  describe('creating', () => {
    test('when an authorization is created, then 201 shows its key exactly once, the key is the stored one, and no later page shows it', async () => {
      const session = await signIn();

      const { page, clientId, apiKey } = await createInConsole(session);

      expect(page.body).toContain('<h1>Authorization created</h1>');
      expect(page.body).toContain('This key is shown once.');
      expect(page.body).toContain('data-copy="api-key"');
      expect(apiKey).toMatch(/^rsk_[0-9A-Za-z]{49}$/);
      expect(hasValidChecksum(apiKey, 'rsk')).toBe(true);
      expect(occurrences(page.body, apiKey)).toBe(1);
      const stored = await h.store.find(ORG, clientId);
      expect(stored).toMatchObject({ organizationId: ORG, recipientName: 'Acme Insurance', scopes: ['qr_score', 'pillar_breakdown'] });
      expect(stored?.keyDigest).toBe(digestApiKey(apiKey));

      const list = await visit('/console', { cookie: session.cookie });
      const detail = await visit(`/console/authorizations/${clientId}`, { cookie: session.cookie });
      const revoke = await visit(`/console/authorizations/${clientId}/revoke`, { cookie: session.cookie });
      for (const later of [list, detail, revoke]) {
        expect(later.status).toBe(200);
        expect(later.body).toContain(clientId);
        expect(later.body).not.toContain(apiKey);
      }
      expect(list.body).toContain('Acme Insurance');
      expect(list.body).toContain('Score and grade, Pillar breakdown');
    });

    test('when an expiry and allowed addresses are given, then they are stored and the detail page shows them', async () => {
      const session = await signIn();

      const { clientId } = await createInConsole(session, {
        expiresAt: '2026-12-31',
        allowedCidrs: ' 203.0.113.0/24\r\n\r\n2001:db8::/32\r\n',
      });

      expect(await h.store.find(ORG, clientId)).toMatchObject({
        expiresAt: '2027-01-01T00:00:00.000Z',
        allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'],
      });
      const detail = await visit(`/console/authorizations/${clientId}`, { cookie: session.cookie });
      expect(detail.body).toContain('<dd>203.0.113.0/24, 2001:db8::/32</dd>');
      expect(detail.body).toContain('<time datetime="2027-01-01T00:00:00.000Z">2027-01-01 00:00 UTC</time>');
    });

    test('when no type and no scope are chosen, then 400 keeps what was typed and says what to fix beside each field', async () => {
      const session = await signIn();
      const typed = 'Acme "Re" Insurance & Co';

      const page = await visit('/console/authorizations', {
        cookie: session.cookie,
        form: { _csrf: session.csrf, recipientType: '', recipientName: typed, expiresAt: '', allowedCidrs: '203.0.113.0/24\r\n10.0.0.1' },
      });

      expect(page.status).toBe(400);
      expect(page.body).toContain('The authorization was not created.');
      expect(page.body).toContain('value="Acme &quot;Re&quot; Insurance &amp; Co"');
      expect(page.body).toMatch(/<textarea id="allowedCidrs"[^>]*>203\.0\.113\.0\/24\r?\n10\.0\.0\.1<\/textarea>/);
      expect(page.body).toContain('<p class="field-problem" id="recipientType-problem">choose the type of the receiving organization</p>');
      expect(page.body).toContain('<p class="field-problem" id="scopes-problem">choose at least one kind of data</p>');
      expect(page.body).toMatch(/<select id="recipientType"[^>]*aria-invalid="true" aria-describedby="recipientType-problem"/);
      // No scope was chosen, so none comes back chosen; the key delivery keeps its default (decision 38).
      expect(page.body).not.toMatch(/name="scopes"[^>]*\schecked/);
      expect(page.body).toMatch(/name="keyDelivery" value="response"\s+checked/);
      expect(csrfOf(page.body)).toBe(session.csrf);
      expect(await h.store.list(ORG)).toEqual([]);
    });

    test('when an address is not one, then 400 keeps the chosen type and scopes and names the addresses field', async () => {
      const session = await signIn();

      const page = await visit('/console/authorizations', {
        cookie: session.cookie,
        form: {
          ...validForm(session.csrf),
          recipientType: 'auditor',
          scopes: ['score_trend'],
          allowedCidrs: '203.0.113.0/24\nnot-an-address',
        },
      });

      expect(page.status).toBe(400);
      expect(page.body).toMatch(/<option value="auditor"\s+selected>/);
      expect(page.body).not.toMatch(/<option value="insurance_provider"\s+selected>/);
      expect(page.body).toMatch(/value="score_trend"\s+checked/);
      expect(page.body).not.toMatch(/value="qr_score"\s+checked/);
      expect(page.body).toContain('id="allowedCidrs-problem"');
      expect(page.body).toContain('must be an IPv4 or IPv6 address or CIDR range');
      expect(page.body).toContain('203.0.113.0/24\nnot-an-address</textarea>');
      expect(page.body).toContain('value="Acme Insurance"');
      expect(await h.store.list(ORG)).toEqual([]);
    });

    test('when the expiry is in the past, then 400 keeps the date typed and says it must be in the future', async () => {
      const session = await signIn();

      const page = await postCreate(session, { expiresAt: '2026-01-01' });

      expect(page.status).toBe(400);
      expect(page.body).toContain('<p class="field-problem" id="expiresAt-problem">must be in the future</p>');
      expect(page.body).toContain('value="2026-01-01"');
      expect(await h.store.list(ORG)).toEqual([]);
    });

    test('when a recipient name is markup, then every page shows it as text', async () => {
      const session = await signIn();
      const name = '<script>alert(1)</script>"><img src=x>';
      const escaped = '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x&gt;';

      const { page, clientId } = await createInConsole(session, { recipientName: name });
      const list = await visit('/console', { cookie: session.cookie });
      const detail = await visit(`/console/authorizations/${clientId}`, { cookie: session.cookie });
      const confirm = await visit(`/console/authorizations/${clientId}/revoke`, { cookie: session.cookie });

      for (const shown of [page, list, detail, confirm]) {
        expect(shown.body).toContain(escaped);
        expect(shown.body).not.toContain('<script>alert(1)');
        expect(shown.body).not.toContain('<img src=x>');
      }
      expect(detail.body).toContain(`<title>${escaped} · Resilience Score data access</title>`);
      expect((await h.store.find(ORG, clientId))?.recipientName).toBe(name);
    });
  });

  describe('rotating', () => {
    /** Signs in, creates an authorization and posts its rotate form: `fields`, with the session's CSRF token unless `csrf` is false. */
    async function rotateANewOne(fields: Form, csrf = true) {
      const session = await signIn();
      const { clientId, apiKey } = await createInConsole(session);
      const page = await visit(`/console/authorizations/${clientId}/rotate`, {
        cookie: session.cookie,
        form: csrf ? { _csrf: session.csrf, ...fields } : fields,
      });
      return { session, clientId, apiKey, page };
    }

    test('when the key is rotated with no overlap, then the new key is shown once, is the stored one, and the old one stops now', async () => {
      const { session, clientId, apiKey: oldKey, page } = await rotateANewOne({ overlapSeconds: '0' });

      expect(page.status).toBe(200);
      expect(page.body).toContain('<h1>New key issued</h1>');
      expect(page.body).toContain('The previous key no longer works.');
      const newKey = apiKeyOf(page.body);
      expect(newKey).not.toBe(oldKey);
      expect(hasValidChecksum(newKey, 'rsk')).toBe(true);
      expect(occurrences(page.body, newKey)).toBe(1);
      expect(page.body).not.toContain(oldKey);
      const stored = await h.store.find(ORG, clientId);
      expect(stored?.keyDigest).toBe(digestApiKey(newKey));
      expect(stored?.previousKeyExpiresAt ?? null).toBeNull();
      const detail = await visit(`/console/authorizations/${clientId}`, { cookie: session.cookie });
      expect(detail.body).not.toContain(newKey);
    });

    test('when the key is rotated with an hour of overlap, then the page says until when the previous key works', async () => {
      const { clientId, apiKey: oldKey, page } = await rotateANewOne({ overlapSeconds: '3600' });

      expect(page.status).toBe(200);
      expect(page.body).toContain(
        'The previous key keeps working until <time datetime="2026-11-20T11:00:00.000Z">2026-11-20 11:00 UTC</time>.',
      );
      const stored = await h.store.find(ORG, clientId);
      expect(stored).toMatchObject({
        keyDigest: digestApiKey(apiKeyOf(page.body)),
        previousKeyDigest: digestApiKey(oldKey),
        previousKeyExpiresAt: '2026-11-20T11:00:00.000Z',
      });
    });

    test.each([['abc'], ['-1'], ['604801'], ['1.5'], ['1e3x'], [''], [' '], ['0x10'], ['1e3']])(
      'when the overlap is %j, then it is a 400 page and the key is unchanged',
      async (overlapSeconds) => {
        const { clientId, apiKey, page } = await rotateANewOne({ overlapSeconds });

        expect(page.status).toBe(400);
        expect(page.body).toContain('<h1>Invalid request</h1>');
        expect(page.body).toContain('Choose how long the current key keeps working.');
        expect(page.body).not.toContain('id="api-key"');
        expect((await h.store.find(ORG, clientId))?.keyDigest).toBe(digestApiKey(apiKey));
      },
    );

    test('when a rotation has no overlap field at all, then it is a 400 page and the key is unchanged', async () => {
      const { clientId, apiKey, page } = await rotateANewOne({});

      expect(page.status).toBe(400);
      expect((await h.store.find(ORG, clientId))?.keyDigest).toBe(digestApiKey(apiKey));
    });

    test('when a rotation lacks the CSRF token, then it is a 403 and the key is unchanged', async () => {
      const { clientId, apiKey, page } = await rotateANewOne({ overlapSeconds: '0' }, false);

      expect(page.status).toBe(403);
      expect((await h.store.find(ORG, clientId))?.keyDigest).toBe(digestApiKey(apiKey));
    });

    test('when a revoked authorization is rotated, then it is a 409 page in words and no key is shown', async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);
      expect(
        (await visit(`/console/authorizations/${clientId}/revoke`, { cookie: session.cookie, form: { _csrf: session.csrf } })).status,
      ).toBe(303);

      const page = await visit(`/console/authorizations/${clientId}/rotate`, {
        cookie: session.cookie,
        form: { _csrf: session.csrf, overlapSeconds: '0' },
      });

      expect(page.status).toBe(409);
      expect(page.body).toContain('<h1>Authorization no longer active</h1>');
      expect(page.body).not.toContain('id="api-key"');
    });
  });

  describe('revoking', () => {
    test('when revoke is confirmed with the CSRF token, then 303 leads to the detail with a notice and the status is revoked', async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);

      const confirm = await visit(`/console/authorizations/${clientId}/revoke`, { cookie: session.cookie });
      expect(confirm.status).toBe(200);
      expect(confirm.body).toContain(`<form method="post" action="/console/authorizations/${clientId}/revoke"`);
      expect(csrfOf(confirm.body)).toBe(session.csrf);
      expect((await h.store.find(ORG, clientId))?.revokedAt).toBeNull();

      const revoked = await visit(`/console/authorizations/${clientId}/revoke`, {
        cookie: session.cookie,
        form: { _csrf: csrfOf(confirm.body) },
      });

      expect(revoked.status).toBe(303);
      expect(revoked.location).toBe(`/console/authorizations/${clientId}?notice=revoked`);
      expect((await h.store.find(ORG, clientId))?.revokedAt).toBe(NOW.toISOString());
      const detail = await visit(revoked.location ?? '', { cookie: session.cookie });
      expect(detail.status).toBe(200);
      expect(detail.body).toContain('Revoked. Reads with this authorization are refused from now on.');
      expect(detail.body).toContain('<span class="status revoked"');
      expect(detail.body).not.toContain('Rotate key');
      expect(detail.body).not.toContain(`/console/authorizations/${clientId}/revoke`);
    });

    test('when a revoke lacks the CSRF token or comes cross-site, then it is a 403 and the authorization stays active', async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);

      const missing = await visit(`/console/authorizations/${clientId}/revoke`, { cookie: session.cookie, form: {} });
      const crossSite = await visit(`/console/authorizations/${clientId}/revoke`, {
        cookie: session.cookie,
        form: { _csrf: session.csrf },
        headers: { origin: FOREIGN_ORIGIN, 'sec-fetch-site': 'cross-site' },
      });

      expect([missing.status, crossSite.status]).toEqual([403, 403]);
      expect((await h.store.find(ORG, clientId))?.revokedAt).toBeNull();
    });

    test('when an authorization is already revoked, then its confirmation page leads back to the detail', async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);
      await visit(`/console/authorizations/${clientId}/revoke`, { cookie: session.cookie, form: { _csrf: session.csrf } });

      const confirm = await visit(`/console/authorizations/${clientId}/revoke`, { cookie: session.cookie });

      expect(confirm.status).toBe(303);
      expect(confirm.location).toBe(`/console/authorizations/${clientId}`);
    });
  });

  describe('grants offered to a recipient account (decision 50)', () => {
    /** An account opened by claiming a link of ORG into it, named "Private book"; then a grant offered to it over the API. */
    async function anOffer(): Promise<{ accountId: string; clientId: string }> {
      const token = await signToken({ org: ORG, scope: 'authorizations:write' });
      const create = (body: object) =>
        request(`${h.credentials.baseUrl}/v1/organizations/${ORG}/authorizations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], ...body }),
        });
      const linked = await create({ keyDelivery: 'claimLink' });
      // The link names the console as people reach it; this test reaches it on its port.
      const opened = await request(String(linked.body.claim.url).replace(PUBLIC_ORIGIN, h.app.baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ into: 'account', accountName: 'Private book' }),
      });
      const offered = await create({ keyDelivery: 'account', recipientAccountId: opened.body.accountId });
      expect(offered.status).toBe(201);
      return { accountId: opened.body.accountId as string, clientId: offered.body.clientId as string };
    }

    test("when a grant waits for its account, then the list and the detail say pending, offered to the account's id and not its name, and it may be revoked", async () => {
      const session = await signIn();
      const { accountId, clientId } = await anOffer();

      const list = await visit('/console', { cookie: session.cookie });
      const detail = await visit(`/console/authorizations/${clientId}`, { cookie: session.cookie });
      const confirm = await visit(`/console/authorizations/${clientId}/revoke`, { cookie: session.cookie });

      for (const page of [list, detail]) {
        expect(page.body).toContain('<span class="status pending"');
        expect(page.body).toMatch(new RegExp(`Offered to\\s*<span class="id">${accountId}</span>`));
        expect(page.body).toContain('waiting for the account to accept');
      }
      // The list shows the account's name beside the grant claimed into it (the link's recipient chose that); the offer's page does not.
      expect(detail.body).not.toContain('Private book');
      expect(detail.body).toContain(`/console/authorizations/${clientId}/revoke`);
      expect(detail.body).not.toContain('Rotate key');
      expect(detail.body).not.toContain('Issue a new link');
      expect(confirm.status).toBe(200);
      const revoked = await visit(`/console/authorizations/${clientId}/revoke`, {
        cookie: session.cookie,
        form: { _csrf: csrfOf(confirm.body) },
      });
      expect(revoked.status).toBe(303);
      const after = await visit(`/console/authorizations/${clientId}`, { cookie: session.cookie });
      expect(after.body).toContain('<span class="status revoked"');
      expect(after.body).toContain('never accepted');
    });
  });

  describe('another organization and malformed Client IDs', () => {
    test("when another organization's Client ID is asked for, changed or revoked, then it is a 404 page and that authorization is untouched", async () => {
      const session = await signIn();
      const foreign = await createOverApi(OTHER_ORG);
      const before = await h.store.find(OTHER_ORG, foreign);

      const pages = [
        await visit(`/console/authorizations/${foreign}`, { cookie: session.cookie }),
        await visit(`/console/authorizations/${foreign}/revoke`, { cookie: session.cookie }),
        await visit(`/console/authorizations/${foreign}/revoke`, { cookie: session.cookie, form: { _csrf: session.csrf } }),
        await visit(`/console/authorizations/${foreign}/rotate`, {
          cookie: session.cookie,
          form: { _csrf: session.csrf, overlapSeconds: '0' },
        }),
      ];

      for (const page of pages) {
        expect(page.status).toBe(404);
        expect(page.body).toContain('<h1>Authorization not found</h1>');
        expect(page.body).not.toContain(OTHER_ORG);
      }
      expect(await h.store.find(OTHER_ORG, foreign)).toEqual(before);
    });

    test.each([
      ['a word', 'not-a-client-id'],
      ['the prefix alone', 'rs_'],
      ['markup', 'rs_abc%3Cscript%3E'],
      ['too long', `rs_${'a'.repeat(65)}`],
      ['of another prefix', 'xx_abcdefghijklmnopqrstuvwxyz'],
    ])('when the Client ID is %s, then it is a 404 page', async (_label, clientId) => {
      const session = await signIn();

      const detail = await visit(`/console/authorizations/${clientId}`, { cookie: session.cookie });
      const confirm = await visit(`/console/authorizations/${clientId}/revoke`, { cookie: session.cookie });

      for (const page of [detail, confirm]) {
        expect(page.status).toBe(404);
        expect(page.body).toContain('<h1>Authorization not found</h1>');
        expect(page.body).not.toContain('<script>');
      }
    });

    test('when a Client ID is not valid percent-encoding, then it is a 400 page, not a 500', async () => {
      const session = await signIn();

      const page = await visit('/console/authorizations/%E0%A4%A', { cookie: session.cookie });

      expect(page.status).toBe(400);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.body).toContain('<h1>Invalid request</h1>');
    });
  });

  describe('the access log page', () => {
    test('when the log is longer than a page, then the older entries link leads on, and the newest link leads back', async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);
      const oldest = anAccessRecord(clientId, 3 * MINUTE);
      const middle = anAccessRecord(clientId, 2 * MINUTE);
      const newest = anAccessRecord(clientId, MINUTE);
      await h.accessLog.add([oldest, middle, newest]);

      const first = await visit(`/console/authorizations/${clientId}?limit=2`, { cookie: session.cookie });
      expect(first.status).toBe(200);
      expect(first.body).toContain(newest.requestId);
      expect(first.body).toContain(middle.requestId);
      expect(first.body).not.toContain(oldest.requestId);
      const older = /href="([^"]+)#log-heading">Older entries/.exec(first.body)?.[1]?.replaceAll('&amp;', '&');
      expect(older).toMatch(new RegExp(`^/console/authorizations/${clientId}\\?cursor=[A-Za-z0-9_-]+$`));

      const second = await visit(`${older}&limit=2`, { cookie: session.cookie });

      expect(second.status).toBe(200);
      expect(second.body).toContain(oldest.requestId);
      expect(second.body).not.toContain(newest.requestId);
      expect(second.body).toContain('Newest entries');
    });

    test.each([
      ['made up', 'not-a-cursor'],
      ['well-formed but with no instant', Buffer.from('v1|yesterday|r|1').toString('base64url')],
      ['a control character', '%00'],
    ])('when the cursor is %s, then it is a 400 page in words, not a 500', async (_label, cursor) => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);

      const page = await visit(`/console/authorizations/${clientId}?cursor=${cursor}`, { cookie: session.cookie });

      expect(page.status).toBe(400);
      expect(page.body).toContain('<h1>Invalid request</h1>');
      expect(page.body).toContain('cursor is not one this API returned as nextCursor');
    });

    test('when the recipient fetched certificates, then the grant page lists those served, newest first, with their date, format and address (decision 55)', async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);
      await h.accessLog.add([
        anAccessRecord(clientId, 5 * MINUTE),
        anAccessRecord(clientId, 4 * MINUTE, { resource: 'certificate', certificate: { asOf: '2026-11-15', format: 'json' } }),
        anAccessRecord(clientId, 3 * MINUTE, { resource: 'certificate', status: 400, code: 'INVALID_PARAMETER' }),
        anAccessRecord(clientId, 2 * MINUTE, {
          resource: 'certificate',
          certificate: { asOf: '2026-11-16', format: 'pdf' },
          clientAddress: '203.0.113.9',
        }),
      ]);

      const page = await visit(`/console/authorizations/${clientId}`, { cookie: session.cookie });

      expect(page.status).toBe(200);
      const section = /id="certificates-heading"[\s\S]*?<\/section>/.exec(page.body)?.[0] ?? '';
      const rows = [...section.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].slice(1).map((row) =>
        (row[1] ?? '')
          .replace(/<[^>]+>/g, ' ')
          .replace(/\s+/g, ' ')
          .trim(),
      );
      expect(rows).toEqual([
        expect.stringMatching(/ UTC 2026-11-16 PDF 203\.0\.113\.9$/),
        expect.stringMatching(/ UTC 2026-11-15 Signed JSON 198\.51\.100\.7$/),
      ]);
    });

    test('when no certificate was fetched, then the grant page says so', async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);
      await h.accessLog.add([anAccessRecord(clientId, MINUTE)]);

      const page = await visit(`/console/authorizations/${clientId}`, { cookie: session.cookie });

      expect(page.body).toContain('No certificate fetched yet.');
    });

    test('when the limit is out of range or given twice, then it is a 400 page, not a 500', async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);

      const pages = [
        await visit(`/console/authorizations/${clientId}?limit=0`, { cookie: session.cookie }),
        await visit(`/console/authorizations/${clientId}?limit=1&limit=2`, { cookie: session.cookie }),
        await visit(`/console/authorizations/${clientId}?cursor=a&cursor=b`, { cookie: session.cookie }),
      ];

      expect(pages.map((page) => page.status)).toEqual([400, 400, 400]);
    });
  });

  describe('the audit log page (decision 54)', () => {
    /** Three grants made in the console: three changes in the organization's trail, by the person, through the console. */
    async function threeChanges(session: { cookie: string; csrf: string }): Promise<string[]> {
      const made: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        // A second apart: entries of one instant are ordered by their event's id, not by when they were made.
        h.clock.set(new Date(NOW.getTime() + i * 1_000));
        made.push((await createInConsole(session)).clientId);
      }
      return made;
    }
    const hrefOf = (body: string, label: string) => new RegExp(`href="([^"]+)"[^>]*>${label}<`).exec(body)?.[1]?.replaceAll('&amp;', '&');

    test('when it is asked with a filter and a page size, then it lists the matches newest first with their actor, and the older link and the downloads keep the filter', async () => {
      const session = await signIn();
      const [first, second, third] = await threeChanges(session);
      await createOverApi(OTHER_ORG);

      const page = await visit('/console/audit-log?action=authorization.created&limit=2', { cookie: session.cookie });

      expect(page.status).toBe(200);
      expect(page.body.indexOf(third!)).toBeGreaterThan(-1);
      expect(page.body.indexOf(third!)).toBeLessThan(page.body.indexOf(second!));
      expect(page.body).not.toContain(first);
      expect(occurrences(page.body, 'through the console')).toBe(2);
      expect(page.body).toContain('<option value="authorization.created"  selected>');
      const older = hrefOf(page.body, 'Older entries');
      expect(older).toMatch(/^\/console\/audit-log\?action=authorization.created&limit=2&cursor=[A-Za-z0-9_-]+$/);
      expect(hrefOf(page.body, 'CSV')).toBe('/console/audit-log/export.csv?action=authorization.created');
      expect(hrefOf(page.body, 'NDJSON')).toBe('/console/audit-log/export.ndjson?action=authorization.created');

      const next = await visit(older!, { cookie: session.cookie });
      expect(next.status).toBe(200);
      expect(next.body).toContain(first);
      expect(next.body).not.toContain(third);
      expect(hrefOf(next.body, 'Newest entries')).toBe('/console/audit-log?action=authorization.created&limit=2');
    });

    test("when a time filter comes from the date-time field (UTC, no offset), then it is the API's instant: changes from a minute after them show none", async () => {
      const session = await signIn();
      await threeChanges(session);
      const local = (ms: number) => new Date(NOW.getTime() + ms).toISOString().slice(0, 16);

      const before = await visit(`/console/audit-log?from=${local(-MINUTE)}`, { cookie: session.cookie });
      const after = await visit(`/console/audit-log?from=${local(MINUTE)}`, { cookie: session.cookie });

      expect([before.status, after.status]).toEqual([200, 200]);
      expect(occurrences(before.body, 'authorization.created</code>')).toBe(3);
      expect(after.body).toContain('No changes match.');
      expect(after.body).toContain(`value="${local(MINUTE)}"`);
    });

    test.each([
      ['a time that is no time', 'from=yesterday', 'from'],
      ['an unknown action', 'action=authorization.eaten', 'action'],
      ['a limit given twice', 'limit=1&limit=2', 'limit'],
    ])('when the page is asked with %s, then it is a 400 page naming the parameter, with the form kept', async (_label, query, name) => {
      const session = await signIn();

      const page = await visit(`/console/audit-log?${query}`, { cookie: session.cookie });

      expect(page.status).toBe(400);
      expect(page.body).toMatch(new RegExp(`<p class="problem" role="alert">[^<]*${name}`));
      expect(page.body).toContain('<h1>Audit log</h1>');
    });

    test("when the CSV or the NDJSON is downloaded, then it is the API's export of every match, as an attachment, passed on as it streams", async () => {
      const session = await signIn();
      const made = await threeChanges(session);
      // A second after the last: entries of one instant are ordered by their event's id.
      h.clock.set(new Date(NOW.getTime() + 3_000));
      await visit(`/console/authorizations/${made[0]}/revoke`, { cookie: session.cookie, form: { _csrf: session.csrf } });

      const csv = await download(session, '/console/audit-log/export.csv?action=authorization.created');
      // Every line is a JSON document, the whole is not one.
      const ndjson = await download(session, '/console/audit-log/export.ndjson');

      expectAttachment(csv, /^text\/csv/, `audit-log-${ORG}.csv`);
      // Passed on as it comes: chunked, never a body the console held whole to measure.
      expect(csv.headers.get('content-length')).toBeNull();
      expect(csv.headers.get('transfer-encoding')).toBe('chunked');
      const rows = csv.body.trimEnd().split('\r\n');
      expect(rows[0]).toBe('at,action,actorType,actorId,actorVia,requestId,address,clientId');
      expect(rows.slice(1).map((row) => row.split(',')[7])).toEqual([...made].reverse());
      expectAttachment(ndjson, /^application\/x-ndjson/, `audit-log-${ORG}.ndjson`);
      const lines = ndjson.body
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { action: string; actor: { via: string } });
      expect(lines.map((line) => line.action)).toEqual(['authorization.revoked', ...made.map(() => 'authorization.created')]);
      expect(new Set(lines.map((line) => line.actor.via))).toEqual(new Set(['console']));
    });

    test('when a download is asked with a filter the API refuses, or by nobody signed in, then it is the 400 page or the way to sign in, and no file', async () => {
      const session = await signIn();

      const refused = await visit('/console/audit-log/export.csv?action=authorization.eaten', { cookie: session.cookie });
      const anonymous = await visit('/console/audit-log/export.ndjson');

      expect(refused.status).toBe(400);
      expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
      expect(refused.headers.get('content-disposition')).toBeNull();
      expect([anonymous.status, anonymous.location]).toEqual([303, '/console']);
    });
  });

  describe('access reviews (decision 54)', () => {
    /** The due time as the date-time field sends it (UTC, no offset): a week after the harness's clock. */
    const DUE = new Date(NOW.getTime() + 7 * 24 * 60 * MINUTE).toISOString().slice(0, 16);
    const REVIEW_PAGE = /^\/console\/access-reviews\/(arv_[A-Za-z0-9]{24})\?notice=started$/;

    /** A review of the organization's active grants, started from the console's form; its id from the redirect. */
    async function startReview(session: { cookie: string; csrf: string }, onOverdue = 'revoke'): Promise<string> {
      const started = await visit('/console/access-reviews', {
        cookie: session.cookie,
        form: { _csrf: session.csrf, dueAt: DUE, onOverdue },
      });
      expect(started.status).toBe(303);
      const reviewId = REVIEW_PAGE.exec(started.location ?? '')?.[1];
      if (!reviewId) throw new Error(`the start did not lead to a review's page: ${started.location}`);
      return reviewId;
    }
    const decide = (session: { cookie: string; csrf: string }, reviewId: string, clientId: string, form: Form) =>
      visit(`/console/access-reviews/${reviewId}/items/${clientId}`, { cookie: session.cookie, form: { _csrf: session.csrf, ...form } });
    /** The progress as a person reads it, whatever the markup's line breaks. */
    const progressOf = (body: string) => /<\/progress>([^<]*)</.exec(body)?.[1]?.replace(/\s+/g, ' ').trim();
    const rowOf = (body: string, clientId: string) => new RegExp(`<tr id="item-${clientId}">[\\s\\S]*?</tr>`).exec(body)?.[0] ?? '';

    test('when a review is started from the form, then it takes every active grant, each with Keep and Revoke, and the list shows it open with its due time and progress', async () => {
      const session = await signIn();
      const { clientId: first } = await createInConsole(session);
      const { clientId: second } = await createInConsole(session, { recipientName: 'Globex Audit' });
      const { clientId: revoked } = await createInConsole(session);
      await visit(`/console/authorizations/${revoked}/revoke`, { cookie: session.cookie, form: { _csrf: session.csrf } });

      const reviewId = await startReview(session);
      const page = await visit(`/console/access-reviews/${reviewId}?notice=started`, { cookie: session.cookie });
      const list = await visit('/console/access-reviews', { cookie: session.cookie });
      const home = await visit('/console', { cookie: session.cookie });

      expect(page.status).toBe(200);
      expect(page.body).toContain('Review started.');
      expect(progressOf(page.body)).toBe('0 of 2 decided: 0 kept, 0 revoked, 2 pending');
      expect(page.body).toContain(`<time datetime="${DUE}:00.000Z">`);
      expect(rowOf(page.body, first)).toContain('Acme Insurance');
      expect(rowOf(page.body, second)).toContain('Globex Audit');
      expect(rowOf(page.body, first)).toContain('Never');
      for (const clientId of [first, second]) {
        expect(rowOf(page.body, clientId)).toContain(`action="/console/access-reviews/${reviewId}/items/${clientId}"`);
        expect(rowOf(page.body, clientId)).toContain('name="decision" value="revoke"');
      }
      expect(page.body).not.toContain(`item-${revoked}`);
      expect(page.body).toContain(`href="/console/access-reviews/${reviewId}/report.csv"`);
      expect(page.body).toContain(`href="/console/access-reviews/${reviewId}/report.json"`);
      expect(list.status).toBe(200);
      expect(list.body).toContain(`href="/console/access-reviews/${reviewId}"`);
      expect(list.body).toContain('<span class="status open">Open</span>');
      expect(progressOf(list.body)).toMatch(/^0 of 2 decided/);
      expect(home.body).toContain('<a href="/console/access-reviews">Access reviews</a>');
    });

    test('when one grant is kept with a note and the other revoked, then each shows its decision by the person through the console, the revoked grant is revoked by the review, and the review completes', async () => {
      const session = await signIn();
      const { clientId: kept } = await createInConsole(session);
      const { clientId: ended } = await createInConsole(session);
      const reviewId = await startReview(session);

      const keep = await decide(session, reviewId, kept, { decision: 'keep', note: 'Renewal signed <2027>' });
      const revoke = await decide(session, reviewId, ended, { decision: 'revoke', note: '' });
      const page = await visit(revoke.location ?? '', { cookie: session.cookie });

      expect([keep.status, keep.location]).toEqual([303, `/console/access-reviews/${reviewId}?notice=kept#item-${kept}`]);
      expect([revoke.status, revoke.location]).toEqual([303, `/console/access-reviews/${reviewId}?notice=revoked#item-${ended}`]);
      expect(page.body).toContain('Revoked. Reads with that grant are refused from now on.');
      expect(rowOf(page.body, kept)).toMatch(/Kept[\s\S]*Renewal signed &lt;2027&gt;[\s\S]*through the console/);
      expect(rowOf(page.body, ended)).toMatch(/Revoked[\s\S]*through the console/);
      expect(page.body).toContain('<span class="status completed">Completed</span>');
      expect(progressOf(page.body)).toBe('2 of 2 decided: 1 kept, 1 revoked, 0 pending');
      expect(page.body).not.toContain('name="decision"');
      expect(await h.store.find(ORG, ended)).toMatchObject({ revokedAt: expect.any(String), revocationReason: 'access_review' });
      expect((await h.store.find(ORG, kept))?.revokedAt).toBeNull();
    });

    test('when an item decided already is decided again, or with a note over 1000 characters, then the review page says the API refusal with its code, and nothing changes', async () => {
      const session = await signIn();
      const { clientId: decided } = await createInConsole(session);
      const { clientId: pending } = await createInConsole(session);
      const reviewId = await startReview(session);
      await decide(session, reviewId, decided, { decision: 'keep' });

      const again = await decide(session, reviewId, decided, { decision: 'revoke' });
      const tooLong = await decide(session, reviewId, pending, { decision: 'keep', note: 'n'.repeat(1001) });
      const neither = await decide(session, reviewId, pending, { decision: 'archive' });

      expect(again.status).toBe(409);
      expect(again.body).toMatch(/<p class="problem" role="alert">[^<]+<code>ACCESS_REVIEW_ITEM_DECIDED<\/code>/);
      expect(again.body).toContain('<h1>Access review</h1>');
      for (const refused of [tooLong, neither]) {
        expect(refused.status).toBe(400);
        expect(refused.body).toContain('<code>VALIDATION_FAILED</code>');
      }
      expect((await h.store.find(ORG, decided))?.revokedAt).toBeNull();
      expect(rowOf(neither.body, pending)).toContain('Undecided');
      expect(progressOf(neither.body)).toMatch(/^1 of 2 decided/);
    });

    test('when the start form is refused (no choice for the undecided, a due time past), then it is a 400 with each problem by its field and the form kept', async () => {
      const session = await signIn();
      const past = new Date(NOW.getTime() - MINUTE).toISOString().slice(0, 16);

      const page = await visit('/console/access-reviews', {
        cookie: session.cookie,
        form: { _csrf: session.csrf, dueAt: past, onOverdue: '' },
      });
      const missing = await visit('/console/access-reviews', { cookie: session.cookie, form: { _csrf: session.csrf, onOverdue: 'keep' } });

      const pastDue = await visit('/console/access-reviews', {
        cookie: session.cookie,
        form: { _csrf: session.csrf, dueAt: past, onOverdue: 'keep' },
      });

      expect([page.status, missing.status, pastDue.status]).toEqual([400, 400, 400]);
      expect(page.body).toContain('The review was not started.');
      expect(page.body).toContain('<p class="field-problem" id="onOverdue-problem">choose whether they are kept or revoked</p>');
      expect(page.body).toContain(`value="${past}"`);
      expect(missing.body).toContain('id="dueAt-problem"');
      expect(missing.body).not.toContain('id="onOverdue-problem"');
      expect(pastDue.body).toContain('<p class="field-problem" id="dueAt-problem">must be in the future</p>');
      expect(pastDue.body).toMatch(/<option value="keep"\s+selected>\s*Kept\s*<\/option>/);
      expect((await visit('/console/access-reviews', { cookie: session.cookie })).body).toContain('No access reviews yet.');
    });

    test("when the report is downloaded, then the CSV is the API's lines and the JSON is the signed report whose JWS carries it, each an attachment", async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);
      const reviewId = await startReview(session);
      await decide(session, reviewId, clientId, { decision: 'keep', note: '=SUM(A1)' });

      const csv = await download(session, `/console/access-reviews/${reviewId}/report.csv`);
      // The file as the API signed it, not a document parsed and written again.
      const json = await download(session, `/console/access-reviews/${reviewId}/report.json`);

      expectAttachment(csv, /^text\/csv/, `access-review-${reviewId}.csv`);
      const [header, line, ...more] = csv.body.trimEnd().split('\r\n');
      expect(header).toBe(
        'clientId,recipientType,recipientName,scopes,lastUsedAt,readsInPeriod,decision,overdue,note,decidedAt,decidedByType,decidedById,decidedByVia',
      );
      expect(line).toMatch(
        new RegExp(
          `^${clientId},insurance_provider,Acme Insurance,qr_score pillar_breakdown,,0,keep,false,'=SUM\\(A1\\),[^,]+,person,[^,]+,console$`,
        ),
      );
      expect(more).toEqual([]);
      expectAttachment(json, /^application\/json/, `access-review-${reviewId}.json`);
      const signed = JSON.parse(json.body) as { report: { reviewId: string }; jws: string };
      expect(signed.report.reviewId).toBe(reviewId);
      expect(JSON.parse(Buffer.from(signed.jws.split('.')[1] ?? '', 'base64url').toString('utf8'))).toEqual(signed.report);
    });

    test("when a review is another organization's, unknown, or no review id at all, or the grant is none of it, then it is a 404 page and no download", async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);
      const reviewId = await startReview(session);
      const foreign = await signIn(OTHER_ORG);
      const unknown = `arv_${'A'.repeat(24)}`;

      const pages = [
        await visit(`/console/access-reviews/${reviewId}`, { cookie: foreign.cookie }),
        await visit(`/console/access-reviews/${reviewId}/report.csv`, { cookie: foreign.cookie }),
        await decide(foreign, reviewId, clientId, { decision: 'revoke' }),
        await visit(`/console/access-reviews/${unknown}/report.json`, { cookie: session.cookie }),
        await visit('/console/access-reviews/not-a-review', { cookie: session.cookie }),
        await visit('/console/access-reviews/arv_%3Cscript%3E/report.csv', { cookie: session.cookie }),
      ];
      const notAnItem = await decide(session, reviewId, 'not-a-client-id', { decision: 'keep' });

      for (const page of pages) {
        expect(page.status).toBe(404);
        expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(page.body).toContain('<h1>Access review not found</h1>');
        expect(page.body).not.toContain('<script>');
      }
      expect([notAnItem.status, notAnItem.body.includes('<h1>Not a grant of this review</h1>')]).toEqual([404, true]);
      expect((await h.store.find(ORG, clientId))?.revokedAt).toBeNull();
    });

    test('when a decision comes without the CSRF token, then it is a 403 and the grant stays undecided', async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);
      const reviewId = await startReview(session);

      const refused = await visit(`/console/access-reviews/${reviewId}/items/${clientId}`, {
        cookie: session.cookie,
        form: { decision: 'revoke' },
      });
      const page = await visit(`/console/access-reviews/${reviewId}`, { cookie: session.cookie });

      expect([refused.status, refused.body.includes('<h1>Form expired</h1>')]).toEqual([403, true]);
      expect(rowOf(page.body, clientId)).toContain('Undecided');
      expect((await h.store.find(ORG, clientId))?.revokedAt).toBeNull();
    });

    test('when the list is paged, then the older link carries the page size and cursor; a page size given twice is a 400 naming it', async () => {
      const session = await signIn();
      const first = await startReview(session);
      h.clock.set(new Date(NOW.getTime() + 1_000));
      const second = await startReview(session);
      const hrefOf = (body: string, label: string) => new RegExp(`href="([^"]+)"\\s*>${label}<`).exec(body)?.[1]?.replaceAll('&amp;', '&');

      const page = await visit('/console/access-reviews?limit=1', { cookie: session.cookie });
      const older = hrefOf(page.body, 'Older reviews');
      const next = await visit(older ?? '', { cookie: session.cookie });
      const repeated = await visit('/console/access-reviews?limit=1&limit=2', { cookie: session.cookie });

      expect(page.body).toContain(second);
      expect(page.body).not.toContain(first);
      expect(older).toMatch(/^\/console\/access-reviews\?limit=1&cursor=[A-Za-z0-9_-]+$/);
      expect(next.body).toContain(first);
      expect(hrefOf(next.body, 'Newest reviews')).toBe('/console/access-reviews?limit=1');
      expect(repeated.status).toBe(400);
      expect(repeated.body).toMatch(/<p class="problem" role="alert">[^<]*limit/);
    });
  });

  describe('signing out', () => {
    test('when sign-out is posted with the CSRF token, then 303 to /console clears the cookie and the old cookie opens nothing', async () => {
      const session = await signIn();

      const answer = await visit('/console/sign-out', { cookie: session.cookie, form: { _csrf: session.csrf } });

      expect(answer.status).toBe(303);
      expect(answer.location).toBe('/console');
      expect(answer.sessionCookie).toBe('');
      expect(answer.sessionCookieLine).toMatch(/Expires=Thu, 01 Jan 1970/);
      expect((await visit('/console', { cookie: session.cookie })).body).toContain('<h1>Sign in</h1>');
      expect((await visit('/console/authorizations/new', { cookie: session.cookie })).status).toBe(303);
      const create = await visit('/console/authorizations', { cookie: session.cookie, form: validForm(session.csrf) });
      expect(create.status).toBe(303);
      expect(await h.store.list(ORG)).toEqual([]);
    });

    test('when sign-out lacks the CSRF token or comes from a foreign origin, then it is a 403 and the session goes on', async () => {
      const session = await signIn();

      const missing = await visit('/console/sign-out', { cookie: session.cookie, form: {} });
      const foreign = await visit('/console/sign-out', {
        cookie: session.cookie,
        form: { _csrf: session.csrf },
        headers: { origin: FOREIGN_ORIGIN },
      });

      expect([missing.status, foreign.status]).toEqual([403, 403]);
      expect(missing.sessionCookie).toBeUndefined();
      expect((await visit('/console/authorizations/new', { cookie: session.cookie })).status).toBe(200);
    });
  });

  describe('assets and unknown paths', () => {
    test.each([
      ['console.css', /^text\/css/],
      ['console.js', /^text\/javascript/],
      ['icon.svg', /^image\/svg\+xml/],
    ])('when %s is asked for, then it is served from this service with its type, without a session', async (name, type) => {
      const response = await fetch(`${h.app.baseUrl}/console/assets/${name}`);
      const body = Buffer.from(await response.arrayBuffer());

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(type);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(body.equals(await readFile(join(__dirname, '../../console-assets', name)))).toBe(true);
      expect(body.length).toBeGreaterThan(0);
    });

    test('when an unknown console path or asset is asked for, then it is a 404 HTML page', async () => {
      const session = await signIn();
      const pages = [
        await visit('/console/nothing-here'),
        await visit('/console/assets/nothing.js'),
        await visit('/console/assets/..%2Fpackage.json'),
        await visit('/console/authorizations/new/extra', { cookie: session.cookie }),
      ];

      for (const page of pages) {
        expect(page.status).toBe(404);
        expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(page.body).toContain('<h1>Page not found</h1>');
      }
      expect(pages[3]?.body).toContain('Sign out');
    });
  });

  describe('failures', () => {
    test('when the store fails, then it is a 500 page in words, without the error, its message or a stack trace', async () => {
      const session = await signIn();
      h.breakStore(new Error('SQLITE_IOERR: disk I/O error in /var/lib/rsd/rsd.sqlite'));

      const page = await visit('/console', { cookie: session.cookie });

      expect(page.status).toBe(500);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.body).toContain('<h1>Something went wrong</h1>');
      expect(page.body).not.toContain('disk I/O error');
      expect(page.body).not.toContain('/var/lib/rsd');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    });

    test('when a store is out of reach, then it is a 503 page in words with Retry-After, naming nothing of the store', async () => {
      const session = await signIn();
      h.breakStore(new UnavailableError('mongo', { cause: new Error('connect ECONNREFUSED 127.0.0.1:27017') }));

      const page = await visit('/console', { cookie: session.cookie });

      expect(page.status).toBe(503);
      expect(page.headers.get('retry-after')).toBe('5');
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(page.body).toContain('<h1>Try again in a moment</h1>');
      expect(page.body).toContain('A service the console needs is not reachable right now.');
      expect(page.body).not.toMatch(/mongo|ECONNREFUSED|27017/);
    });

    test('when a form has more fields than the console reads, then it is a 413 page in words and nothing is created', async () => {
      const session = await signIn();

      const page = await postCreate(session, { scopes: Array.from({ length: 100 }, () => 'qr_score') });

      expect(page.status).toBe(413);
      expect(page.body).toContain('<h1>Invalid request</h1>');
      expect(page.body).toContain('The form could not be read.');
      expect(await h.store.list(ORG)).toEqual([]);
    });

    test('when a form is larger than the console reads, then it is a 413 page in words and nothing is created', async () => {
      const session = await signIn();

      const page = await postCreate(session, { allowedCidrs: '203.0.113.0/24\n'.repeat(2_000) });

      expect(page.status).toBe(413);
      expect(page.body).toContain('The form could not be read.');
      expect(await h.store.list(ORG)).toEqual([]);
    });
  });

  describe('with an identity provider out of reach', () => {
    test('when /console/sign-in is asked for, then it is a 503 page in words with Retry-After, like every 503', async () => {
      const away = await startConsoleHarness({
        oidc: {
          begin: () => Promise.reject(new TypeError('fetch failed')),
          finish: () => Promise.reject(new Error('no sign-in begun')),
        },
      });
      try {
        const page = await request<string>(`${away.app.baseUrl}/console/sign-in`, { redirect: 'manual' });

        expect(page.status).toBe(503);
        expect(page.headers.get('retry-after')).toBe('5');
        expect(page.headers.get('location')).toBeNull();
        expect(page.body).toContain('<h1>Try again in a moment</h1>');
        expect(page.body).toContain('The identity provider cannot be reached; try again in a moment.');
        expect(page.body).not.toContain('fetch failed');
      } finally {
        await away.close();
      }
    });
  });

  describe('without OpenID Connect configured', () => {
    test('when /console/sign-in is asked for, then it is a 404 with the sign-in page and no redirect or attempt cookie', async () => {
      const page = await visit('/console/sign-in');

      expect(page.status).toBe(404);
      expect(page.location).toBeNull();
      expect(page.body).toContain('<h1>Sign in</h1>');
      expect(page.body).toContain('not configured');
      expect(page.headers.getSetCookie().filter((line) => !line.includes('Expires=Thu, 01 Jan 1970'))).toEqual([]);
    });

    test('when the callback is reached without an attempt, then it is a 404 and no session is set', async () => {
      const page = await visit('/console/auth/callback?code=stolen&state=guessed');

      expect(page.status).toBe(404);
      expect(page.body).toContain('<h1>Sign in</h1>');
      expect(page.sessionCookie).toBeUndefined();
    });
  });

  describe('alert webhooks (decisions 44-45)', () => {
    /** Reached through the notifier's API, where no notifier listens: the port of a server just closed. */
    async function unreachableNotifier(): Promise<AlertWebhookAccess> {
      const server = createNetServer();
      await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
      const { port } = server.address() as { port: number };
      await new Promise<void>((closed) => server.close(() => closed()));
      return alertWebhookAccess({ notifierUrl: `http://127.0.0.1:${port}`, signer: h.signer, log: h.log, timeoutMs: 1_000 });
    }

    test('when nobody is signed in, then the alert webhook pages and changes are a 303 to /console', async () => {
      const pages = [
        await visit('/console/alert-webhooks'),
        await visit('/console/alert-webhooks/wh_1'),
        await visit('/console/alert-webhooks', { form: { _csrf: 'guess', url: 'https://example.com/hooks' } }),
        await visit('/console/alert-webhooks/wh_1/delete', { form: { _csrf: 'guess' } }),
      ];
      expect(pages.map((page) => [page.status, page.location])).toEqual(pages.map(() => [303, '/console']));
    });

    test('when the console reaches no notifier, then the page says where alert webhooks are managed instead', async () => {
      const session = await signIn();
      const home = await visit('/console', { cookie: session.cookie });
      expect(home.body).toContain('href="/console/alert-webhooks"');

      const page = await visit('/console/alert-webhooks', { cookie: session.cookie });
      expect(page.status).toBe(200);
      expect(page.body).toContain('not connected to the notifier');
      expect(page.body).toContain(`/v1/organizations/${ORG}/webhooks`);
      expect(page.body).toContain('CONSOLE_JWKS_URL');
    });

    test('when the notifier is out of reach, then each page is a 503 in words with Retry-After, and nothing internal shows', async () => {
      await h.close();
      h = await startConsole({ alertWebhooks: await unreachableNotifier() });
      const session = await signIn();

      const list = await visit('/console/alert-webhooks', { cookie: session.cookie });
      const create = await visit('/console/alert-webhooks', {
        cookie: session.cookie,
        form: { _csrf: session.csrf, url: 'https://hooks.example.com/', events: 'authorization.first_use' },
      });
      for (const page of [list, create]) {
        expect(page.status).toBe(503);
        expect(page.headers.get('retry-after')).toBe('5');
        expect(page.body).toContain('The notifier, which sends the alerts, cannot be reached');
      }
    });

    test('when the notifier limits the organization (429), then the page says so with its Retry-After, not as an outage (decision 50)', async () => {
      // A stand-in notifier over its limit, as the notifier answers: no code, Retry-After.
      const notifier = createHttpServer((_req, res) =>
        res
          .writeHead(429, { 'content-type': 'application/json', 'retry-after': '37' })
          .end(JSON.stringify({ error: 'Too Many Requests', message: 'Rate limit exceeded', timestamp: NOW.toISOString() })),
      );
      await new Promise<void>((listening) => notifier.listen(0, '127.0.0.1', listening));
      const { port } = notifier.address() as { port: number };
      try {
        await h.close();
        h = await startConsole({
          alertWebhooks: alertWebhookAccess({
            notifierUrl: `http://127.0.0.1:${port}`,
            signer: h.signer,
            log: h.log,
            timeoutMs: 1_000,
          }),
        });
        const session = await signIn();

        const page = await visit('/console/alert-webhooks', { cookie: session.cookie });

        expect(page.status).toBe(429);
        expect(page.headers.get('retry-after')).toBe('37');
        expect(page.body).toContain('<h1>Too many requests</h1>');
        expect(page.body).toContain('try again in 37 seconds');
      } finally {
        await new Promise<void>((closed) => notifier.close(() => closed()));
      }
    });

    test('when a change lacks the session’s token, then it is refused (403) and the notifier is never asked', async () => {
      const calls: string[] = [];
      const recording: AlertWebhookAccess = {
        run: (_actor, use) =>
          use(
            new Proxy({} as Parameters<typeof use>[0], {
              get: (_target, name) => () => {
                calls.push(String(name));
                return Promise.resolve([]);
              },
            }),
          ),
      };
      await h.close();
      h = await startConsole({ alertWebhooks: recording });
      const session = await signIn();

      const refused = await visit('/console/alert-webhooks/wh_1/delete', { cookie: session.cookie, form: { _csrf: 'guess' } });
      expect(refused.status).toBe(403);
      expect(calls).toEqual([]);
      const listed = await visit('/console/alert-webhooks', { cookie: session.cookie });
      expect(listed.status).toBe(200);
      expect(calls).toEqual(['list']);
    });
  });

  describe('claim links (decision 38)', () => {
    const claimUrlOf = (body: string): string => {
      const match = /<code id="claim-url" class="secret">([^<]+)<\/code>/.exec(body);
      if (!match?.[1]) throw new Error('the page shows no claim link');
      return match[1];
    };

    test('when an authorization is created with a one-time link, then the page shows the link once with its copy button and no key', async () => {
      const session = await signIn();

      const page = await postCreate(session, { keyDelivery: 'claimLink', claimValidSeconds: '3600' });

      expect(page.status).toBe(201);
      expect(claimUrlOf(page.body)).toMatch(new RegExp(`^${PUBLIC_ORIGIN}/claim/[A-Za-z0-9_-]{43}$`));
      expect(page.body).toContain('data-copy="claim-url"');
      expect(page.body).not.toContain('id="api-key"');
      expect(page.body).toContain('2026-11-20 11:00 UTC');
      const detail = await visit(`/console/authorizations/${clientIdOf(page.body)}`, { cookie: session.cookie });
      expect(detail.body).toContain('Not yet claimed');
      expect(detail.body).toContain('Send a new claim link');
      expect(detail.body).not.toContain('Rotate the key');
    });

    test('when a new link is issued from the authorization page, then the old one stops working and the new one claims; the page then says when and from where', async () => {
      const session = await signIn();
      const created = await postCreate(session, { keyDelivery: 'claimLink' });
      const clientId = clientIdOf(created.body);
      const local = (url: string) => url.replace(PUBLIC_ORIGIN, h.app.baseUrl);
      const claim = (url: string) =>
        request(local(url), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{}' });

      const reissued = await visit(`/console/authorizations/${clientId}/claim-link`, {
        cookie: session.cookie,
        form: { _csrf: session.csrf, claimValidSeconds: '86400' },
      });

      expect(reissued.status).toBe(200);
      expect((await claim(claimUrlOf(created.body))).status).toBe(404);
      expect((await claim(claimUrlOf(reissued.body))).status).toBe(201);
      const detail = await visit(`/console/authorizations/${clientId}`, { cookie: session.cookie });
      expect(detail.body).toContain('Claimed by the recipient');
      expect(detail.body).toContain('from 127.0.0.1');
      expect(detail.body).toContain('Rotate the key');
      const again = await visit(`/console/authorizations/${clientId}/claim-link`, {
        cookie: session.cookie,
        form: { _csrf: session.csrf },
      });
      expect(again.status).toBe(409);
    });

    test('when the validity is not one the API accepts, then the form comes back with the problem beside the field', async () => {
      const session = await signIn();

      const page = await postCreate(session, { keyDelivery: 'claimLink', claimValidSeconds: '60' });

      expect(page.status).toBe(400);
      expect(page.body).toContain('id="claimValidSeconds-problem"');
    });
  });

  describe('reads per day (decision 38)', () => {
    test('when an authorization was read and refused on some days, then its page draws 30 days as SVG and lists the same figures as text', async () => {
      const session = await signIn();
      const { clientId } = await createInConsole(session);
      const DAY = 24 * 60 * MINUTE;
      await h.accessLog.add([
        anAccessRecord(clientId, 2 * DAY),
        anAccessRecord(clientId, 2 * DAY - MINUTE, { status: 401, code: 'INVALID_API_KEY' }),
        anAccessRecord(clientId, MINUTE),
        anAccessRecord(clientId, 2 * MINUTE, { status: 304 }),
        anAccessRecord(clientId, 40 * DAY),
      ]);

      const page = await visit(`/console/authorizations/${clientId}`, { cookie: session.cookie });

      expect(page.body).toMatch(/<svg viewBox="0 0 640 180" role="img" aria-labelledby="reads-chart-title reads-chart-desc"/);
      expect(page.body).not.toMatch(/\sstyle=/);
      expect(page.body.match(/<rect class="reads"/g)).toHaveLength(30);
      expect(page.body).toContain('3 successful reads and 1 refusal from 2026-10-22 to 2026-11-20');
      expect(page.body).toMatch(/<th scope="row">2026-11-18<\/th>\s*<td>1<\/td>\s*<td>1<\/td>/);
      expect(page.body).toMatch(/<th scope="row">2026-11-20<\/th>\s*<td>2<\/td>\s*<td>0<\/td>/);
      expect(page.body).toMatch(/<th scope="row">2026-11-19<\/th>\s*<td>0<\/td>\s*<td>0<\/td>/);
    });
  });
});
