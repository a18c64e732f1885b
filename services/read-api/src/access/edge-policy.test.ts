import { request, type RunningApp } from '@rsd/testkit';
import { issueCredential, recordScore, type IssuedCredential } from '../testing/read-api-fixtures';
import { startReadApi } from '../testing/read-api-harness';

/** The tests connect from 127.0.0.1; X-Forwarded-For stands in for other addresses when a proxy hop is trusted. */
async function withReadApi(env: NodeJS.ProcessEnv, run: (app: RunningApp, credential: IssuedCredential) => Promise<void>) {
  const running = await startReadApi({ env });
  try {
    const credential = await issueCredential(running.views);
    await recordScore(running.views);
    await run(running, credential);
  } finally {
    await running.close();
  }
}

const scoreOf = (app: RunningApp, credential: IssuedCredential, headers: Record<string, string> = {}) =>
  request(`${app.baseUrl}/v1/customers/${credential.clientId}/score`, { headers: { 'x-api-key': credential.apiKey, ...headers } });

function expectBlocked(response: { status: number; body: Record<string, unknown> }) {
  expect(response.status).toBe(403);
  expect(response.body).toEqual({
    error: 'Forbidden',
    message: expect.stringContaining('edge security policy'),
    timestamp: expect.any(String),
    requestId: expect.any(String),
  });
}

describe('edge policy', () => {
  test('when the caller address is in a denied range, then 403 without a code', () =>
    withReadApi({ EDGE_DENY_CIDRS: '10.0.0.0/8, 127.0.0.0/8' }, async (app, credential) => {
      expectBlocked(await scoreOf(app, credential));
    }));

  test('when an allow list is set and the caller is not on it, then 403', () =>
    withReadApi({ EDGE_ALLOW_CIDRS: '192.0.2.0/24' }, async (app, credential) => {
      expectBlocked(await scoreOf(app, credential));
    }));

  test('when an allow list is set and the caller is on it, then the request goes on', () =>
    withReadApi({ EDGE_ALLOW_CIDRS: '192.0.2.0/24,127.0.0.1' }, async (app, credential) => {
      expect((await scoreOf(app, credential)).status).toBe(200);
    }));

  test('when a user agent matches a blocked pattern in any case, then 403', () =>
    withReadApi({ EDGE_BLOCKED_USER_AGENTS: 'sqlmap,^$' }, async (app, credential) => {
      expectBlocked(await scoreOf(app, credential, { 'user-agent': 'SQLMap/1.7' }));
      expectBlocked(await scoreOf(app, credential, { 'user-agent': '' }));
      expect((await scoreOf(app, credential, { 'user-agent': 'insurer-sync/2.1' })).status).toBe(200);
    }));

  test('when a proxy hop is trusted, then the forwarded address is judged, IPv4-mapped IPv6 as IPv4', () =>
    withReadApi({ TRUST_PROXY_HOPS: '1', EDGE_DENY_CIDRS: '203.0.113.0/24' }, async (app, credential) => {
      expectBlocked(await scoreOf(app, credential, { 'x-forwarded-for': '203.0.113.5' }));
      expectBlocked(await scoreOf(app, credential, { 'x-forwarded-for': '::ffff:203.0.113.5' }));
      expect((await scoreOf(app, credential, { 'x-forwarded-for': '198.51.100.5' })).status).toBe(200);
    }));

  test('when no proxy hop is trusted, then a forged X-Forwarded-For changes nothing', () =>
    withReadApi({ EDGE_DENY_CIDRS: '203.0.113.0/24' }, async (app, credential) => {
      expect((await scoreOf(app, credential, { 'x-forwarded-for': '203.0.113.5' })).status).toBe(200);
    }));

  test('when an IPv6 range is denied, then a forwarded IPv6 address in it is blocked', () =>
    withReadApi({ TRUST_PROXY_HOPS: '1', EDGE_DENY_CIDRS: '2001:db8::/32' }, async (app, credential) => {
      expectBlocked(await scoreOf(app, credential, { 'x-forwarded-for': '2001:db8:1::7' }));
      expect((await scoreOf(app, credential, { 'x-forwarded-for': '2001:db9::7' })).status).toBe(200);
    }));

  test('when a caller is blocked, then unknown paths and the docs are blocked too, but /healthz still answers', () =>
    withReadApi({ EDGE_DENY_CIDRS: '127.0.0.1' }, async (app) => {
      expectBlocked(await request(`${app.baseUrl}/v1/unknown`));
      expectBlocked(await request(`${app.baseUrl}/v1/openapi.json`));
      const health = await request(`${app.baseUrl}/healthz`);
      expect(health.status).toBe(200);
      expect(health.body).toEqual({ status: 'ok' });
    }));
});
