import { request, signToken } from '@rsd/testkit';
import { startConsole, type ConsoleHarness } from '../testing/console-harness';

const ORG = 'acme';
/** The console as people reach it: where claim links point, and where the old ones redirect. */
const PUBLIC_URL = 'https://console.acme.example';
let h: ConsoleHarness;
let token: string;

beforeEach(async () => {
  h = await startConsole({ env: { FAILED_AUTH_LIMIT_PER_MINUTE: '5' }, publicUrl: PUBLIC_URL });
  token = await signToken({ org: ORG, scope: 'authorizations:write', sub: 'admin@acme' });
});
afterEach(async () => {
  await h.close();
});

async function linkPath(): Promise<string> {
  const created = await request(`${h.credentials.baseUrl}/v1/organizations/${ORG}/authorizations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ recipientType: 'auditor', recipientName: 'Example Audit', scopes: ['qr_score'], keyDelivery: 'claimLink' }),
  });
  return new URL((created.body.claim as { url: string }).url).pathname;
}

describe("the console's claim page (decisions 38 and 51), over the credentials service's claim API", () => {
  test('when the page is used, then the GET sets the form token, a form without it is refused, and the form with it claims', async () => {
    const url = `${h.app.baseUrl}${await linkPath()}`;

    const opened = await request(url);
    const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const csrf = /name="_csrf" value="([^"]+)"/.exec(String(opened.body))?.[1] ?? '';
    const form = (body: string, headers: Record<string, string> = {}) =>
      request(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });

    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect((await form(`_csrf=${csrf}`)).status).toBe(403);
    expect((await form('_csrf=forged', { cookie })).status).toBe(403);
    const claimed = await form(`_csrf=${encodeURIComponent(csrf)}`, { cookie, origin: PUBLIC_URL });
    expect(claimed.status).toBe(201);
    expect(String(claimed.body)).toMatch(/rsk_[A-Za-z0-9]{49}/);
  });

  test('when a program follows the link, then it gets the API answer relayed, and failures count against its address', async () => {
    const url = `${h.app.baseUrl}${await linkPath()}`;
    const described = await request(url, { headers: { accept: 'application/json' } });
    expect(described).toMatchObject({ status: 200, body: { organizationId: ORG, recipientName: 'Example Audit' } });
    const claimed = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(claimed.status).toBe(201);
    expect(claimed.body.apiKey).toMatch(/^rsk_/);

    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      statuses.push((await request(`${h.app.baseUrl}/claim/${'A'.repeat(43)}`, { headers: { accept: 'application/json' } })).status);
    }
    expect(statuses).toEqual([404, 404, 404, 404, 404, 429]);
  });

  test('when a claim link printed before is opened on the credentials service, then it redirects to the console page, path and query kept', async () => {
    const path = await linkPath();
    const old = await request<string>(`${h.credentials.baseUrl}${path}?from=mail`, {
      redirect: 'manual',
      headers: { accept: 'text/html' },
    });
    expect(old.status).toBe(307);
    expect(old.headers.get('location')).toBe(`${PUBLIC_URL}${path}?from=mail`);
    // A program on the old address still gets the API itself.
    expect((await request(`${h.credentials.baseUrl}${path}`, { headers: { accept: 'application/json' } })).status).toBe(200);
  });
});
