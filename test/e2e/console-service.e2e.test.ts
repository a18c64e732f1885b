import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseCookies } from 'cookie';
import { CONSOLE_AUDIENCES, CONSOLE_SIGNING_KEY, consoleSigner, consoleSigningKeyOf } from '@rsd/platform';
import { request } from '@rsd/testkit';
import type { EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import * as orgAdmin from '../support/organization-admin';

// Decision 51 on `npm start`: the console is the fifth service of the one process, a client of the
// credentials service's and the notifier's APIs; URLs printed before it had its own port still work.

const ORG = 'console-org';
let dataDir: string;
let product: EmbeddedProcess;
let token: string;

beforeAll(async () => {
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-e2e-console-service-'));
  token = await devTokenFor(dataDir, ORG);
}, 120_000);
afterAll(() => stopAndRemove(product, dataDir));

const signInLink = () => /(http:\/\/\S+\/console\/sign-in\/link\?token=[A-Za-z0-9_.-]+)/.exec(product.output())?.[1] ?? '';

describe('the console as its own service (decision 51)', () => {
  test('the welcome text names the console on its own port, and its sign-in link is on it', () => {
    expect(product.output()).toContain(`console        ${product.urls.console}/console`);
    expect(signInLink().startsWith(`${product.urls.console}/console/sign-in/link?token=`)).toBe(true);
    expect(product.urls.console).not.toBe(product.urls.credentials);
  });

  test('a sign-in link printed for the credentials port redirects to the console, path and query kept, and signs in there', async () => {
    const link = new URL(signInLink());
    const old = `${product.urls.credentials}${link.pathname}${link.search}`;

    const redirected = await request<string>(old, { redirect: 'manual' });
    expect(redirected.status).toBe(308);
    expect(redirected.headers.get('location')).toBe(link.href);

    // Followed, it is the console's one-time sign-in: a session cookie, then the list of the organization's authorizations.
    const signedIn = await request<string>(redirected.headers.get('location') ?? '', { redirect: 'manual' });
    expect(signedIn.status).toBe(303);
    const session = parseCookies(signedIn.headers.getSetCookie().join('; ')).rsd_console ?? '';
    const list = await request<string>(`${product.urls.console}/console`, { headers: { cookie: `rsd_console=${session}` } });
    expect(list.status).toBe(200);
    expect(list.body).toContain('<h1>Authorizations</h1>');
  });

  test('a claim link on the credentials port redirects a browser to the console page, which claims the key through the API', async () => {
    const linked = await orgAdmin.createAuthorization<{ clientId: string; apiKey: string; claim: { url: string } }>(
      product.urls.credentials,
      ORG,
      token,
      {
        recipientType: 'auditor',
        scopes: ['qr_score'],
        keyDelivery: 'claimLink',
      },
    );
    const path = new URL(linked.claim.url).pathname;
    // New links point at the console.
    expect(linked.claim.url).toBe(`${product.urls.console}${path}`);

    const old = await request<string>(`${product.urls.credentials}${path}`, { redirect: 'manual', headers: { accept: 'text/html' } });
    expect(old.status).toBe(307);
    expect(old.headers.get('location')).toBe(`${product.urls.console}${path}`);

    const page = await request<string>(old.headers.get('location') ?? '');
    expect(page.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const claimed = await request<string>(`${product.urls.console}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: product.urls.console },
      body: `_csrf=${encodeURIComponent(csrf)}`,
    });
    expect(claimed.status).toBe(201);
    expect(claimed.body).toMatch(/rsk_[A-Za-z0-9]{49}/);
    // The credentials service recorded the claim from the browser's address, which the console vouched for.
    const record = await request(`${product.urls.credentials}/v1/organizations/${ORG}/authorizations/${linked.clientId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(record.body).toMatchObject({ keyClaimed: true, claimedFromAddress: '127.0.0.1' });
  });

  test("a token signed with another key than the console's is refused by the credentials service and the notifier; the console's own key is not", async () => {
    const forger = consoleSigner(consoleSigningKeyOf(CONSOLE_SIGNING_KEY.generate()));
    const person = { organizationId: ORG, subject: 'mallory', personIssuer: 'https://idp.example', scope: 'authorizations:write' };
    const credentialsCall = async (bearer: string) =>
      (
        await request(`${product.urls.credentials}/v1/organizations/${ORG}/authorizations`, {
          headers: { authorization: `Bearer ${bearer}` },
        })
      ).status;
    const notifierCall = async (bearer: string) =>
      (await request(`${product.urls.notifier}/v1/organizations/${ORG}/webhooks`, { headers: { authorization: `Bearer ${bearer}` } }))
        .status;

    expect(await credentialsCall(await forger.sign(CONSOLE_AUDIENCES.credentials, person))).toBe(401);
    expect(await notifierCall(await forger.sign(CONSOLE_AUDIENCES.notifier, person))).toBe(401);

    // The console's own key (made into the data directory at first start) signs the same claims, and both accept them.
    const real = consoleSigner(consoleSigningKeyOf(await readFile(join(dataDir, CONSOLE_SIGNING_KEY.file), 'utf8')));
    expect(await credentialsCall(await real.sign(CONSOLE_AUDIENCES.credentials, person))).toBe(200);
    expect(await notifierCall(await real.sign(CONSOLE_AUDIENCES.notifier, person))).toBe(200);
    // Each for its own API alone.
    expect(await credentialsCall(await real.sign(CONSOLE_AUDIENCES.notifier, person))).toBe(401);
    // And it is the key the console publishes.
    const jwks = (await request(`${product.urls.console}/.well-known/jwks.json`)).body as { keys: { kid: string }[] };
    expect(jwks.keys.map((key) => key.kid)).toEqual([(await real.jwks()).keys[0]?.kid]);
  });
});
