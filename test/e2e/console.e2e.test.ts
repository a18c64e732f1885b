import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { aScoreSubmission, request, signToken, TEST_JWT_SECRET } from '@rsd/testkit';
import { launchChromium, loopbackOnly, screenshot, seriousAccessibilityViolations, watchConsoleErrors } from '../support/browser';
import { eventually, startEmbedded, type EmbeddedProcess } from '../support/embedded-process';
import { startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer';
import { freePort } from '../support/raw-http';
import { startSwitchableReceiver, verifiesWith, type Received } from '../support/webhook-lifecycle';

// The console (decisions 30-32) in a real browser: Debian's Chromium driven by Playwright, against
// `npm start` with sign-in by a real OpenID Connect provider on loopback, and the one-time link.

const ORG = 'demo-org';
const TODAY = new Date().toISOString().slice(0, 10);
const CLIENT = { clientId: 'rsd-console', clientSecret: 'console-client-secret-for-the-browser-tests-only' };

let scratch: string;
let issuer: OidcIssuer;
let product: EmbeddedProcess;
let browser: Browser;
let consoleUrl: string;
/** Every page's console errors on the console's origin, and each page's serious accessibility violations. */
const consoleErrors: string[] = [];
const accessibility: Record<string, string[]> = {};
const firstPageMs: number[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'rsd-e2e-console-'));
  const port = await freePort();
  consoleUrl = `http://127.0.0.1:${port}/console`;
  issuer = await startOidcIssuer({ ...CLIENT, redirectUri: `${consoleUrl}/auth/callback` });
  product = await startEmbedded({
    DATA_DIR: join(scratch, 'data'),
    LOG_LEVEL: 'info',
    CONSOLE_PORT: String(port),
    JWT_HS256_SECRET: TEST_JWT_SECRET,
    CONSOLE_OIDC_ISSUER: issuer.url,
    CONSOLE_OIDC_CLIENT_ID: CLIENT.clientId,
    CONSOLE_OIDC_CLIENT_SECRET: CLIENT.clientSecret,
    CONSOLE_OIDC_REDIRECT_URI: `${consoleUrl}/auth/callback`,
    CONSOLE_OIDC_SCOPE: 'openid profile email org',
    // The alert webhooks' receiver listens on loopback (decision 28 allows it for tests only).
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });
  browser = await launchChromium();
  const token = await signToken({ scope: 'scores:write' });
  const posted = await request(`${product.urls.scoreIngest}/v1/scores`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(aScoreSubmission({ organizationId: ORG, scoreDate: TODAY, score: 81 })),
  });
  expect(posted.status).toBe(202);
}, 120_000);

/** What a test started, stopped after it whether it passed or not. */
const cleanups: (() => Promise<void>)[] = [];
const afterThis = (cleanup: () => Promise<void>) => cleanups.push(cleanup);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

afterAll(async () => {
  await browser?.close();
  await product?.stop();
  await issuer?.stop();
  await rm(scratch, { recursive: true, force: true });
});

async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  await loopbackOnly(page);
  consoleErrors.push(...watchConsoleErrors(page, new URL(consoleUrl).origin));
  return { context, page };
}

/** Checks the page as it stands (axe-core) and saves its screenshot. */
async function look(page: Page, name: string): Promise<void> {
  accessibility[name] = await seriousAccessibilityViolations(page);
  await screenshot(page, name, scratch);
}

async function signInWithProvider(page: Page, login: string): Promise<void> {
  await page.goto(consoleUrl);
  await page.getByRole('link', { name: 'Sign in with your identity provider' }).click();
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any password: the test provider checks none');
  await page.locator('button[type=submit]').click();
  // The provider's consent step.
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL((url) => url.href.startsWith(consoleUrl));
}

/** A grant to an auditor made through the console's form, reading the score; its key as the page shows it once. */
async function grantInConsole(page: Page, recipientName: string): Promise<{ clientId: string; apiKey: string }> {
  await page.getByRole('link', { name: 'New authorization' }).click();
  await page.getByLabel('Recipient type').selectOption('auditor');
  await page.getByLabel('Recipient name').fill(recipientName);
  await page.getByLabel(/Score and grade/).check();
  await page.getByRole('button', { name: 'Create authorization' }).click();
  const clientId = (await page.locator('#client-id').textContent()) ?? '';
  const apiKey = (await page.locator('#api-key').textContent()) ?? '';
  expect(clientId).toMatch(/^rs_/);
  return { clientId, apiKey };
}

/**
 * An administrator, signed in to a page of its own, grants the score by a one-time link (decision 38)
 * through the console's form, valid for `validSeconds` when given: the page, the link and the Client ID it shows.
 */
async function claimLinkInConsole(
  recipientType: string,
  recipientName: string,
  validSeconds?: string,
): Promise<{ context: BrowserContext; page: Page; link: string; clientId: string }> {
  const { context, page } = await newPage();
  await signInWithProvider(page, `admin@${ORG}`);
  await page.getByRole('link', { name: 'New authorization' }).click();
  await page.getByLabel('Recipient type').selectOption(recipientType);
  await page.getByLabel('Recipient name').fill(recipientName);
  await page.getByLabel(/Score and grade/).check();
  await page.getByRole('radio', { name: /one-time link/ }).check();
  if (validSeconds) await page.getByLabel('The link works for').selectOption(validSeconds);
  await page.getByRole('button', { name: 'Create authorization' }).click();
  await visible(page.getByRole('heading', { level: 1, name: 'Claim link issued', exact: true }));
  const link = (await page.locator('#claim-url').textContent()) ?? '';
  const clientId = (await page.locator('#client-id').textContent()) ?? '';
  return { context, page, link, clientId };
}

/** Waits for the element to be shown, and fails the test when it is not within 10 s. */
const visible = (locator: Locator) => locator.first().waitFor({ state: 'visible', timeout: 10_000 });

const read = (clientId: string, apiKey: string, resource = 'score') =>
  request(`${product.urls.readApi}/v1/customers/${clientId}/${resource}`, { headers: { 'x-api-key': apiKey } });

describe('the console in a browser', () => {
  test('an administrator signs in by OpenID Connect, grants access, watches it used, rotates and revokes; the recipient is refused', async () => {
    const { context, page } = await newPage();
    await page.goto(consoleUrl);
    await visible(page.getByRole('heading', { level: 1, name: 'Sign in', exact: true }));
    await look(page, 'sign-in');

    await signInWithProvider(page, `admin@${ORG}`);
    const listed = Number(await page.evaluate("performance.getEntriesByType('navigation')[0].duration"));
    firstPageMs.push(listed);
    await visible(page.getByText('No authorizations yet.'));
    await visible(page.getByText(`Signed in as Test admin for ${ORG}`));
    await look(page, 'empty');

    // A refused form keeps everything that was typed.
    await page.getByRole('link', { name: 'New authorization' }).click();
    await look(page, 'create');
    await page.getByLabel('Recipient name').fill('Northwind Insurance');
    await page.getByLabel('Allowed addresses').fill('not an address');
    await page.getByRole('button', { name: 'Create authorization' }).click();
    await visible(page.getByRole('alert').filter({ hasText: 'The authorization was not created' }));
    expect(await page.getByLabel('Recipient name').inputValue()).toBe('Northwind Insurance');
    expect(await page.getByLabel('Allowed addresses').inputValue()).toBe('not an address');
    await look(page, 'create-refused');

    await page.getByLabel('Recipient type').selectOption('insurance_provider');
    await page.getByLabel(/Score and grade/).check();
    await page.getByLabel(/Pillar breakdown/).check();
    await page.getByLabel('Allowed addresses').fill('');
    await page.getByRole('button', { name: 'Create authorization' }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'Authorization created', exact: true }));
    await visible(page.getByText('This key is shown once.'));
    const clientId = (await page.locator('#client-id').textContent()) ?? '';
    const apiKey = (await page.locator('#api-key').textContent()) ?? '';
    expect(clientId).toMatch(/^rs_/);
    expect(apiKey).toMatch(/^rsk_/);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await visible(page.getByText('Copied.'));
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(apiKey);
    await look(page, 'key-once');

    // The recipient reads with it; the console shows the read and the usage, and never the key again.
    const answered = await eventually(async () => {
      const answer = await read(clientId, apiKey);
      return answer.status === 200 ? answer : undefined;
    });
    expect(answered.body).toMatchObject({ score: 81 });
    await page.getByRole('link', { name: 'View the authorization' }).click();
    await eventually(
      async () => {
        await page.reload();
        return (await page.locator('section', { hasText: 'Access log' }).locator('tbody tr').count()) > 0 ? true : undefined;
      },
      15_000,
      250,
    );
    const logRow = page.locator('section', { hasText: 'Access log' }).locator('tbody tr').first();
    await visible(logRow.filter({ hasText: 'score' }));
    await visible(logRow.filter({ hasText: answered.headers.get('x-request-id') ?? 'missing request id' }));
    expect(await page.content()).not.toContain(apiKey);
    await look(page, 'detail');
    await page.getByRole('link', { name: 'Authorizations' }).click();
    const row = page.getByRole('table', { name: /^Authorizations of/ }).locator('tbody tr', { hasText: 'Northwind Insurance' });
    await visible(row.filter({ hasText: 'Active' }));
    await visible(row.filter({ hasText: '1 / 1' }));
    expect(await row.textContent()).not.toContain('Not yet');
    // Decision 44: the grant's first read is an alert, listed under the authorizations with its address.
    const alerts = page.locator('section', { has: page.getByRole('heading', { level: 2, name: 'Alerts', exact: true }) });
    await eventually(
      async () => {
        await page.reload();
        return (await alerts.locator('tbody tr', { hasText: 'First used' }).count()) > 0 ? true : undefined;
      },
      15_000,
      250,
    );
    await visible(alerts.locator('tbody tr', { hasText: 'First used' }).filter({ hasText: 'Northwind Insurance' }));
    expect(await page.content()).not.toContain(apiKey);
    await look(page, 'list');

    // Rotation with no overlap: the new key works, the old one is refused.
    await row.getByRole('link').click();
    await page.getByLabel('Current key keeps working for').selectOption('0');
    await page.getByRole('button', { name: 'Rotate key' }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'New key issued', exact: true }));
    await visible(page.getByText('The previous key no longer works.'));
    const newKey = (await page.locator('#api-key').textContent()) ?? '';
    expect(newKey).not.toBe(apiKey);
    await look(page, 'rotated');
    await eventually(async () => ((await read(clientId, newKey)).status === 200 ? true : undefined));
    await eventually(async () => ((await read(clientId, apiKey)).status === 401 ? true : undefined));

    // Revocation, after its confirmation: the recipient is refused at once.
    await page.getByRole('link', { name: 'View the authorization' }).click();
    await page.getByRole('link', { name: 'Revoke…' }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'Revoke access for Northwind Insurance?', exact: true }));
    await look(page, 'revoke-confirm');
    await page.getByRole('button', { name: 'Revoke access' }).click();
    await visible(page.getByRole('status').filter({ hasText: 'Revoked.' }));
    await visible(page.locator('.facts').filter({ hasText: 'Revoked' }));
    const refused = await read(clientId, newKey);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('CREDENTIAL_INACTIVE');

    // Neither key, the session cookie nor the client secret is in anything the product or the provider wrote.
    const sessionCookie = (await context.cookies(consoleUrl)).find((cookie) => cookie.name === 'rsd_console')?.value;
    expect(sessionCookie).toBeDefined();
    for (const secret of [apiKey, newKey, sessionCookie ?? '', CLIENT.clientSecret]) {
      expect(product.output()).not.toContain(secret);
      expect(issuer.output()).not.toContain(secret);
    }
    await context.close();
  }, 120_000);

  test('a person whose claims do not grant the console is refused, and a forged or replayed callback signs nobody in', async () => {
    const { context, page } = await newPage();
    await signInWithProvider(page, `viewer@${ORG}`);
    await visible(page.getByRole('alert').filter({ hasText: 'may not manage authorizations' }));
    await look(page, 'refused');
    await page.goto(`${consoleUrl}/authorizations/new`);
    await visible(page.getByRole('heading', { level: 1, name: 'Sign in', exact: true }));

    // A callback the console did not start: no attempt, or a state that is not the attempt's.
    const forged = await page.goto(`${consoleUrl}/auth/callback?code=forged&state=forged`);
    expect(forged?.status()).toBe(400);
    await context.close();

    // A sign-in the console began (a fresh browser, at the provider's login form), finished with a state that is not its own.
    const fresh = await newPage();
    await fresh.page.goto(consoleUrl);
    await fresh.page.getByRole('link', { name: 'Sign in with your identity provider' }).click();
    await fresh.page.locator('input[name=login]').waitFor();
    const wrongState = await fresh.page.goto(`${consoleUrl}/auth/callback?code=forged&state=not-the-attempts`);
    expect(wrongState?.status()).toBe(400);
    await visible(fresh.page.getByRole('alert').filter({ hasText: 'did not confirm this sign-in' }));
    // The attempt was spent on the forgery: replaying the callback finds none.
    const replay = await fresh.page.goto(`${consoleUrl}/auth/callback?code=forged&state=not-the-attempts`);
    expect(replay?.status()).toBe(400);
    await visible(fresh.page.getByRole('alert').filter({ hasText: 'expired or was already used' }));
    await fresh.context.close();
  }, 60_000);

  test('the one-time link printed at start signs in once; a cookie planted before sign-in is not the session after it', async () => {
    const link = /(http:\/\/\S+\/console\/sign-in\/link\?token=[A-Za-z0-9_.-]+)/.exec(product.output())?.[1];
    expect(link).toBeDefined();
    const { context, page } = await newPage();
    const planted = 'attacker-chosen-session-identifier';
    await context.addCookies([{ name: 'rsd_console', value: planted, url: consoleUrl }]);
    await page.goto(link ?? '');
    await visible(page.getByRole('heading', { level: 1, name: 'Authorizations', exact: true }));
    const session = (await context.cookies(consoleUrl)).find((cookie) => cookie.name === 'rsd_console');
    expect(session?.value).not.toBe(planted);
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/console' });

    const again = await browser.newContext();
    const second = await again.newPage();
    const used = await second.goto(link ?? '');
    expect(used?.status()).toBe(400);
    await visible(second.getByRole('alert').filter({ hasText: 'expired or was already used' }));
    await again.close();
    await context.close();
  }, 60_000);

  test('a page on another origin that posts to the console with the session cookie changes nothing (CSRF)', async () => {
    const { context, page } = await newPage();
    await signInWithProvider(page, `admin@${ORG}`);
    const before = await page.locator('tbody tr').count();
    // Same site (127.0.0.1), other origin: the Lax cookie goes with the post, so only the token and origin checks stand.
    const attacker = await serveAttackerPage(
      `<form id="f" method="post" action="${consoleUrl}/authorizations">` +
        '<input name="recipientType" value="partner"><input name="scopes" value="qr_score"><input name="_csrf" value="guessed"></form>' +
        '<script>document.getElementById("f").submit()</script>',
    );
    try {
      const refused = page.waitForResponse((response) => response.url() === `${consoleUrl}/authorizations`);
      await page.goto(attacker.url);
      expect((await refused).status()).toBe(403);
      await page.goto(consoleUrl);
      await visible(page.getByRole('heading', { level: 1, name: 'Authorizations', exact: true }));
      expect(await page.locator('tbody tr').count()).toBe(before);
    } finally {
      await attacker.close();
    }
    await context.close();
  }, 60_000);

  afterAll(() => {
    process.stderr.write(`[console] the list page after sign-in loaded in ${firstPageMs.map((ms) => ms.toFixed(0)).join(', ')} ms\n`);
  });

  test('an administrator sends a one-time link; the recipient claims the key in another browser; the authorization page shows the claim and draws the reads', async () => {
    const { context, page, link, clientId } = await claimLinkInConsole('partner', 'Contoso Partners', '86400');
    expect(link).toMatch(new RegExp(`^${new URL(consoleUrl).origin}/claim/[A-Za-z0-9_-]{43}$`));
    expect(await page.content()).not.toContain('id="api-key"');
    await page.getByRole('button', { name: 'Copy link' }).click();
    await visible(page.getByText('Copied.'));
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(link);
    await look(page, 'claim-link-once');

    // The recipient, in a browser of its own: opening the link shows the grant, claiming shows the key once.
    const { context: recipient, page: claimPage } = await newPage();
    await claimPage.goto(link);
    await visible(claimPage.getByRole('heading', { level: 1, name: 'Claim your API key', exact: true }));
    await visible(claimPage.getByText('Contoso Partners (Partner)'));
    await look(claimPage, 'claim');
    await claimPage.getByRole('button', { name: 'Claim the key' }).click();
    await visible(claimPage.getByRole('heading', { level: 1, name: 'Your API key', exact: true }));
    const apiKey = (await claimPage.locator('#api-key').textContent()) ?? '';
    expect(apiKey).toMatch(/^rsk_/);
    await look(claimPage, 'claimed-key');
    await claimPage.goto(link);
    await visible(claimPage.getByRole('heading', { level: 1, name: 'Link already used', exact: true }));
    await look(claimPage, 'claim-used');
    await recipient.close();

    await eventually(async () => ((await read(clientId, apiKey)).status === 200 ? true : undefined));
    await read(clientId, apiKey);
    await read(clientId, `${apiKey.slice(0, -1)}x`);
    await page.getByRole('link', { name: 'View the authorization' }).click();
    await visible(page.getByText('Claimed by the recipient'));
    await eventually(
      async () => {
        await page.reload();
        return (await page.locator('#reads-chart-desc').textContent())?.includes('refusal from') ? true : undefined;
      },
      15_000,
      250,
    );
    await visible(page.getByRole('img', { name: /Reads per day, last 30 days/ }));
    expect(await page.content()).not.toContain(apiKey);
    await look(page, 'detail-chart');
    for (const secret of [apiKey, link.split('/').pop() ?? '']) expect(product.output()).not.toContain(secret);
    await context.close();
  }, 120_000);

  test('a recipient adds a granted link to a new portfolio from the claim page; the console names the portfolio that holds the grant', async () => {
    const { context, page, link, clientId } = await claimLinkInConsole('insurance_provider', 'Northwind Mutual');

    const { context: recipient, page: claimPage } = await newPage();
    await claimPage.goto(link);
    await visible(claimPage.getByRole('heading', { level: 2, name: 'Or add it to my portfolio', exact: true }));
    await claimPage.getByLabel('Name of a new portfolio (optional)').fill('Northwind book');
    await claimPage.getByRole('button', { name: 'Add to my portfolio' }).click();
    await visible(claimPage.getByRole('heading', { level: 1, name: 'Added to your portfolio', exact: true }));
    const accountKey = (await claimPage.locator('#account-key').textContent()) ?? '';
    const accountId = (await claimPage.locator('#account-id').textContent()) ?? '';
    expect(accountKey).toMatch(/^rsa_/);
    expect(accountId).toMatch(/^rcp_/);
    await look(claimPage, 'claimed-into-portfolio');
    await recipient.close();

    await eventually(async () => ((await read(clientId, accountKey)).status === 200 ? true : undefined));
    await page.goto(`${consoleUrl}/authorizations/${clientId}`);
    await visible(page.getByText('Northwind book'));
    await visible(page.getByText('None of its own: read with the key of the portfolio that holds it'));
    expect(await page.getByRole('heading', { name: 'Rotate the key' }).count()).toBe(0);
    await page.goto(consoleUrl);
    await visible(page.getByRole('columnheader', { name: 'Portfolio' }));
    await visible(page.getByText(accountId));
    await look(page, 'list-with-portfolio');
    expect(await page.content()).not.toContain(accountKey);
    for (const secret of [accountKey, link.split('/').pop() ?? '']) expect(product.output()).not.toContain(secret);
    await context.close();
  }, 120_000);

  test('an administrator manages an alert webhook: adds it, tests it, pauses and enables it, rotates its secret, redelivers, changes and deletes it', async () => {
    const receiver = await startSwitchableReceiver('127.0.0.1');
    afterThis(() => receiver.close());
    const { context, page } = await newPage();
    await signInWithProvider(page, `admin@${ORG}`);
    await page.getByRole('link', { name: 'Alert webhooks' }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'Alert webhooks', exact: true }));
    await visible(page.getByText('No alert webhooks yet.'));
    await look(page, 'alert-webhooks-empty');

    // Refused by the notifier's own rules: the form keeps what was typed and says why.
    await page.getByRole('textbox', { name: /Address/ }).fill('ftp://example.com/hooks');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await visible(page.getByRole('alert').filter({ hasText: 'The webhook was not created' }));
    expect(await page.getByRole('textbox', { name: /Address/ }).inputValue()).toBe('ftp://example.com/hooks');

    await page.getByRole('textbox', { name: /Address/ }).fill(receiver.url);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'Webhook created', exact: true }));
    const secret = (await page.locator('#webhook-secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    await look(page, 'alert-webhook-created');

    // A test delivery, signed with the secret just shown (checked by the official Standard Webhooks library).
    await page.getByRole('link', { name: 'View the webhook' }).click();
    await visible(page.getByText('Active', { exact: true }));
    await page.getByRole('button', { name: 'Send a test delivery' }).click();
    await visible(page.getByText('A test delivery (webhook.test) is on its way.'));
    const tested = await delivered(receiver, 1);
    expect(JSON.parse(tested.body)).toMatchObject({ type: 'webhook.test' });
    expect(verifiesWith(tested, secret)).toBe(true);

    await page.getByRole('button', { name: 'Pause' }).click();
    await visible(page.getByText('Paused. Alerts are not sent to it until it is enabled again.'));
    await visible(page.getByText('Paused', { exact: true }));
    await page.getByRole('button', { name: 'Enable' }).click();
    await visible(page.getByText('Enabled. The next alerts are sent to it.'));

    // A rotation with an hour's overlap: the next delivery carries both signatures.
    await page.getByLabel('Old secret keeps signing for').selectOption('3600');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'New signing secret', exact: true }));
    const rotated = (await page.locator('#webhook-secret').textContent()) ?? '';
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await look(page, 'alert-webhook-rotated');
    await page.getByRole('link', { name: 'View the webhook' }).click();
    await page.getByRole('button', { name: 'Send a test delivery' }).click();
    const overlapping = await delivered(receiver, 2);
    expect(String(overlapping.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifiesWith(overlapping, rotated)).toBe(true);
    expect(verifiesWith(overlapping, secret)).toBe(true);

    // The first test delivery again: the same webhook-id and the same body.
    await page.reload();
    const firstId = String(tested.headers['webhook-id']);
    await visible(page.getByText(firstId));
    await page.getByRole('row').filter({ hasText: firstId }).first().getByRole('button', { name: 'Redeliver' }).click();
    await visible(page.getByText('The delivery is sent again, with its original payload and webhook-id.'));
    const again = await delivered(receiver, 3);
    expect(again.headers['webhook-id']).toBe(firstId);
    expect(again.body).toBe(tested.body);
    await look(page, 'alert-webhook');

    // Changed: fewer alerts; a bad address refused with the form kept.
    await page.getByRole('checkbox', { name: /First used/ }).uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await visible(page.getByText('Webhook saved.'));
    expect(await page.getByRole('checkbox', { name: /First used/ }).isChecked()).toBe(false);
    await page.getByRole('textbox', { name: /Address/ }).fill('not an address');
    await page.getByRole('button', { name: 'Save' }).click();
    await visible(page.getByRole('alert').filter({ hasText: 'The webhook was not changed' }));
    expect(await page.getByRole('textbox', { name: /Address/ }).inputValue()).toBe('not an address');

    await page.getByRole('button', { name: 'Delete webhook' }).click();
    await visible(page.getByText('Webhook deleted.'));
    await visible(page.getByText('No alert webhooks yet.'));
    for (const shown of [secret, rotated]) expect(product.output()).not.toContain(shown);
    await context.close();
  }, 120_000);

  test('an administrator reads the audit log, filters it to one grant and downloads it as CSV and NDJSON (decision 54)', async () => {
    const { context, page } = await newPage();
    await signInWithProvider(page, `admin@${ORG}`);
    const { clientId } = await grantInConsole(page, 'Audited Auditors');

    await page.goto(consoleUrl);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'Audit log', exact: true }));
    const rows = page.getByRole('table', { name: 'Audit log, newest first' }).locator('tbody tr');
    await visible(rows.filter({ hasText: clientId }).filter({ hasText: 'through the console' }));
    await look(page, 'audit-log');

    // The filters as a person sets them: one grant, one action.
    await page.getByLabel('Client ID').fill(clientId);
    await page.getByLabel('Action').selectOption('authorization.created');
    await page.getByRole('button', { name: 'Filter' }).click();
    await visible(page.getByText('Audit log, newest first'));
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('admin@demo-org');
    expect(await page.getByLabel('Client ID').inputValue()).toBe(clientId);

    // Each download is the API's export of the same filter, saved by the browser as a file.
    const downloaded = async (name: string) => {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name, exact: true }).click()]);
      return { file: download.suggestedFilename(), text: await readFile((await download.path()) ?? '', 'utf8') };
    };
    const csv = await downloaded('CSV');
    expect(csv.file).toBe(`audit-log-${ORG}.csv`);
    const [header, row, ...more] = csv.text.trimEnd().split('\r\n');
    expect(header).toBe('at,action,actorType,actorId,actorVia,requestId,address,clientId');
    expect(row).toMatch(new RegExp(`^[^,]+,authorization\\.created,person,[^,]*admin@demo-org,console,[^,]+,[^,]+,${clientId}$`));
    expect(more).toEqual([]);
    const ndjson = await downloaded('NDJSON');
    expect(ndjson.file).toBe(`audit-log-${ORG}.ndjson`);
    expect(
      ndjson.text
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { clientId: string }).clientId),
    ).toEqual([clientId]);
    await context.close();
  }, 120_000);

  test("the recipient fetches certificates as JSON and as a PDF; the grant's page lists each with its date, format and address (decision 55)", async () => {
    const { context, page } = await newPage();
    await signInWithProvider(page, `admin@${ORG}`);
    const { clientId, apiKey } = await grantInConsole(page, 'Certified Auditors');
    const certificate = (query: string, accept: string) =>
      fetch(`${product.urls.readApi}/v1/customers/${clientId}/certificate${query}`, { headers: { 'x-api-key': apiKey, accept } });
    const json = await eventually(async () => {
      const answer = await certificate('', 'application/json');
      return answer.status === 200 ? answer : undefined;
    });
    const pdf = await certificate(`?asOf=${TODAY}`, 'application/pdf');
    expect([json.status, pdf.status, pdf.headers.get('content-type')]).toEqual([200, 200, 'application/pdf']);

    await page.getByRole('link', { name: 'View the authorization' }).click();
    const fetched = page.getByRole('table', { name: /certificates fetched/ }).locator('tbody tr');
    await eventually(
      async () => {
        await page.reload();
        return (await fetched.count()) >= 2 ? true : undefined;
      },
      15_000,
      250,
    );
    expect(await fetched.count()).toBe(2);
    await visible(fetched.nth(0).filter({ hasText: TODAY }).filter({ hasText: 'PDF' }).filter({ hasText: '127.0.0.1' }));
    await visible(fetched.nth(1).filter({ hasText: TODAY }).filter({ hasText: 'Signed JSON' }));
    await look(page, 'certificates-fetched');
    await context.close();
  }, 120_000);

  test('an administrator starts an access review, keeps one grant with a note and revokes another, whose key the read API then refuses, and downloads the report as CSV (decision 54)', async () => {
    const { context, page } = await newPage();
    await signInWithProvider(page, `admin@${ORG}`);
    const kept = await grantInConsole(page, 'Reviewed and Kept');
    await page.goto(consoleUrl);
    const ended = await grantInConsole(page, 'Reviewed and Revoked');
    await eventually(async () => ((await read(ended.clientId, ended.apiKey)).status === 200 ? true : undefined));

    await page.goto(consoleUrl);
    await page.getByRole('link', { name: 'Access reviews' }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'Access reviews', exact: true }));
    await look(page, 'access-reviews');
    // A week ahead, as the date-time field takes it (UTC, to the minute).
    await page.getByLabel('Due (UTC)', { exact: true }).fill(new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 16));
    await page.getByLabel('Grants still undecided at the due time are').selectOption('keep');
    await page.getByRole('button', { name: 'Start the review' }).click();
    await visible(page.getByRole('status').filter({ hasText: 'Review started.' }));
    const rowOf = (clientId: string) =>
      page.getByRole('table', { name: 'Grants under review, by Client ID' }).locator('tbody tr').filter({ hasText: clientId });
    await visible(rowOf(kept.clientId).filter({ hasText: 'Undecided' }));
    await look(page, 'access-review');

    await rowOf(kept.clientId).getByLabel('Note').fill('Contract renewed for 2027');
    await rowOf(kept.clientId).getByRole('button', { name: 'Keep' }).click();
    await visible(page.getByRole('status').filter({ hasText: 'Kept.' }));
    await rowOf(ended.clientId).getByRole('button', { name: 'Revoke' }).click();
    await visible(page.getByRole('status').filter({ hasText: 'Revoked.' }));
    await visible(rowOf(kept.clientId).filter({ hasText: 'Contract renewed for 2027' }).filter({ hasText: 'through the console' }));
    await visible(
      rowOf(ended.clientId)
        .filter({ hasText: 'Revoked' })
        .filter({ hasText: `admin@${ORG}` }),
    );
    await look(page, 'access-review-decided');

    // The revoked grant's key is refused from then on; the kept one still reads.
    const refused = await read(ended.clientId, ended.apiKey);
    expect([refused.status, refused.body.code]).toEqual([401, 'CREDENTIAL_INACTIVE']);
    expect((await read(kept.clientId, kept.apiKey)).status).toBe(200);

    // The report as the browser saves it: a line per grant, with each decision, who made it and through what.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'CSV', exact: true }).click()]);
    expect(download.suggestedFilename()).toMatch(/^access-review-arv_[A-Za-z0-9]{24}\.csv$/);
    const [header, ...lines] = (await readFile((await download.path()) ?? '', 'utf8')).trimEnd().split('\r\n');
    expect(header).toBe(
      'clientId,recipientType,recipientName,scopes,lastUsedAt,readsInPeriod,decision,overdue,note,decidedAt,decidedByType,decidedById,decidedByVia',
    );
    expect(lines.find((line) => line.startsWith(kept.clientId))).toMatch(
      /^[^,]+,auditor,Reviewed and Kept,qr_score,[^,]*,[0-9]+,keep,false,Contract renewed for 2027,[^,]+,person,[^,]*admin@demo-org,console$/,
    );
    expect(lines.find((line) => line.startsWith(ended.clientId))).toMatch(
      /,Reviewed and Revoked,qr_score,[^,]*,[0-9]+,revoke,false,,[^,]+,person,[^,]*admin@demo-org,console$/,
    );
    await context.close();
  }, 120_000);

  test("each service's API reference (/docs) renders every operation under the page policy, and nothing refused by it", async () => {
    for (const [service, url] of Object.entries(product.urls)) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await loopbackOnly(page);
      // The policy's refusals are console errors in Chromium (its icons are data: images: without them, "Loading the image … violates …").
      const errors = watchConsoleErrors(page, url);
      const answer = await page.goto(`${url}/docs`);
      expect(answer?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      await page.locator('.opblock').first().waitFor();
      const operations = await page.locator('.opblock').count();
      const documented = (await (await fetch(`${url}/v1/openapi.json`)).json()) as { paths: Record<string, object>; webhooks?: object };
      const methods = Object.values(documented.paths).flatMap((item) => Object.keys(item).filter((key) => key !== 'servers'));
      expect({ service, operations }).toEqual({ service, operations: methods.length + Object.keys(documented.webhooks ?? {}).length });
      expect({ service, errors }).toEqual({ service, errors: [] });
      await context.close();
    }
  }, 60_000);

  test('a page of another origin that frames the console or an API reference shows nothing of them (frame-ancestors)', async () => {
    // A console page that answers itself (sign-in redirects to the identity provider), and every API reference.
    const targets = [`${consoleUrl}/no-such-page`, ...Object.values(product.urls).map((url) => `${url}/docs`)];
    const attacker = await serveAttackerPage(targets.map((target) => `<iframe src="${target}"></iframe>`).join(''));
    afterThis(attacker.close);
    const { context, page } = await newPage();
    // `load` waits for every frame, refused ones included.
    await page.goto(attacker.url, { waitUntil: 'load' });
    expect(page.frames()).toHaveLength(targets.length + 1);
    const framed = await Promise.all(
      page
        .frames()
        .slice(1)
        .map(async (frame) => ({ url: frame.url(), text: String(await frame.evaluate("document.body?.innerText ?? ''").catch(() => '')) })),
    );
    // Chromium replaces a refused frame with its own error document ("… refused to connect"): none of the target's text is there.
    expect(framed).toEqual(targets.map(() => ({ url: expect.any(String), text: expect.stringMatching(/^(|\S+ refused to connect\.)$/) })));
    await context.close();
  });

  test('every page has no serious accessibility violation, and the console wrote no error to the browser console', async () => {
    // The checker itself finds what it should: an image without a text alternative is a critical violation.
    const control = await browser.newPage();
    await control.setContent('<!doctype html><html lang="en"><title>control</title><main><img src="/pixel.png"></main></html>');
    expect((await seriousAccessibilityViolations(control)).join('\n')).toContain('image-alt');
    await control.close();

    expect(Object.keys(accessibility).length).toBeGreaterThanOrEqual(10);
    expect(accessibility).toEqual(Object.fromEntries(Object.keys(accessibility).map((name) => [name, []])));
    // Refused documents are logged by Chromium as failed loads; those statuses were each asserted above. Nothing else.
    const unexpected = consoleErrors.filter(
      (error) => !/Failed to load resource: the server responded with a status of (40[034]|410)/.test(error),
    );
    expect(unexpected).toEqual([]);
  });
});

/** The receiver's `count`th delivery, once it has arrived. */
async function delivered(receiver: { received: Received[] }, count: number): Promise<Received> {
  return eventually(() => Promise.resolve(receiver.received[count - 1]), 15_000, 100);
}

async function serveAttackerPage(body: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html>${body}`));
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  return { url: `http://127.0.0.1:${address.port}/`, close: () => new Promise((done) => server.close(() => done())) };
}
