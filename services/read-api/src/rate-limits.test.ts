import type { RateLimitStoreFactory, ViewStore } from '@rsd/ports';
import { request, type RunningApp } from '@rsd/testkit';
import { issueCredential, recordScore, testClock, type IssuedCredential } from './testing/read-api-fixtures';
import { startReadApi } from './testing/read-api-harness';

/** The read API with a score of acme's recorded, on a clock the test may move. */
async function aScoredReadApi(env: NodeJS.ProcessEnv = {}) {
  const clock = testClock('2026-11-21T08:00:00.000Z');
  const running = await startReadApi({ env, clock });
  await recordScore(running.views, { organizationId: 'acme' });
  return { running, views: running.views, clock };
}

function getScore(running: RunningApp, credential: IssuedCredential, headers: Record<string, string> = {}) {
  return request(`${running.baseUrl}/v1/customers/${credential.clientId}/score`, {
    headers: { 'x-api-key': credential.apiKey, ...headers },
  });
}

function expectRetryAfter(headers: Headers): void {
  const retryAfter = headers.get('retry-after') ?? '';
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(60);
}

describe('per-credential rate limit', () => {
  let running: RunningApp;
  let views: ViewStore;

  beforeEach(async () => {
    ({ running, views } = await aScoredReadApi());
  });

  afterEach(async () => {
    await running.close();
  });

  test('when a credential makes 120 requests in a minute, then all succeed with RateLimit headers and the 121st is 429 with Retry-After', async () => {
    const credential = await issueCredential(views);

    const allowed = [];
    for (let i = 0; i < 120; i += 1) allowed.push(await getScore(running, credential));
    const refused = await getScore(running, credential);

    expect(allowed.map((r) => r.status)).toEqual(Array(120).fill(200));
    expect(allowed[0]?.headers.get('ratelimit-policy')).toMatch(/^"credential"; q=120; w=60; pk=:.+:$/);
    expect(allowed[0]?.headers.get('ratelimit')).toMatch(/^"credential"; r=119; t=\d+$/);
    expect(allowed[119]?.headers.get('ratelimit')).toMatch(/^"credential"; r=0; t=\d+$/);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: 'Too Many Requests',
      message: expect.stringContaining('120 requests per minute'),
      timestamp: expect.stringMatching(/Z$/),
      requestId: expect.any(String),
    });
    expectRetryAfter(refused.headers);
    expect(refused.headers.get('ratelimit-policy')).toMatch(/^"credential"; q=120; w=60/);
    expect(refused.headers.get('ratelimit')).toMatch(/^"credential"; r=0; t=\d+$/);
  });

  test('when one credential is over its limit, then another credential of the same organization is unaffected', async () => {
    const busy = await issueCredential(views);
    const other = await issueCredential(views);
    for (let i = 0; i < 120; i += 1) await getScore(running, busy);

    const busyAgain = await getScore(running, busy);
    const otherResponse = await getScore(running, other);

    expect(busyAgain.status).toBe(429);
    expect(otherResponse.status).toBe(200);
    expect(otherResponse.headers.get('ratelimit')).toMatch(/^"credential"; r=119;/);
  });

  test('when a credential calls several endpoints, then they share its one quota', async () => {
    const credential = await issueCredential(views);
    for (let i = 0; i < 60; i += 1) await getScore(running, credential);
    for (let i = 0; i < 60; i += 1) {
      await request(`${running.baseUrl}/v1/customers/${credential.clientId}/pillars`, { headers: { 'x-api-key': credential.apiKey } });
    }

    const response = await request(`${running.baseUrl}/v1/customers/${credential.clientId}/score/history`, {
      headers: { 'x-api-key': credential.apiKey },
    });

    expect(response.status).toBe(429);
  });
});

describe('failed-authentication limit per client address', () => {
  let running: RunningApp;
  let views: ViewStore;

  beforeEach(async () => {
    ({ running, views } = await aScoredReadApi({ FAILED_AUTH_LIMIT_PER_MINUTE: '5', TRUST_PROXY_HOPS: '1' }));
  });

  afterEach(async () => {
    await running.close();
  });

  const from = (address: string) => ({ 'x-forwarded-for': address });

  test('when an address fails authentication more than the limit, then its further failures are 429 with Retry-After', async () => {
    const victim = await issueCredential(views);
    const failures = [
      () => request(`${running.baseUrl}/v1/customers/not-an-id/score`, { headers: from('203.0.113.7') }),
      () => request(`${running.baseUrl}/v1/customers/${victim.clientId}/score`, { headers: from('203.0.113.7') }),
      () =>
        request(`${running.baseUrl}/v1/customers/rs_0123456789abcdefABCDEF/score`, {
          headers: { ...from('203.0.113.7'), 'x-api-key': 'rsk_x' },
        }),
      () => getScore(running, { ...victim, apiKey: 'rsk_guess' }, from('203.0.113.7')),
      () => getScore(running, { ...victim, apiKey: 'rsk_guess2' }, from('203.0.113.7')),
    ];
    const counted = [];
    for (const fail of failures) counted.push(await fail());

    const refused = await getScore(running, { ...victim, apiKey: 'rsk_guess3' }, from('203.0.113.7'));

    expect(counted.map((r): unknown => r.body.code)).toEqual([
      'INVALID_CLIENT_ID',
      'MISSING_API_KEY',
      'CREDENTIAL_NOT_FOUND',
      'INVALID_API_KEY',
      'INVALID_API_KEY',
    ]);
    expect(counted[0]?.headers.get('ratelimit')).toMatch(/^"failed-auth"; r=4;/);
    expect(refused.status).toBe(429);
    expect(refused.body).not.toHaveProperty('code');
    expect(refused.body.message).toMatch(/failed authentication/);
    expectRetryAfter(refused.headers);
    expect(refused.headers.get('ratelimit-policy')).toMatch(/^"failed-auth"; q=5; w=60/);
  });

  test('when an address is over the failure limit, then a valid credential from that address still works', async () => {
    const valid = await issueCredential(views);
    for (let i = 0; i < 6; i += 1) await getScore(running, { ...valid, apiKey: `rsk_guess${i}` }, from('203.0.113.8'));

    const response = await getScore(running, valid, from('203.0.113.8'));

    expect(response.status).toBe(200);
    expect(response.body.clientId).toBe(valid.clientId);
  });

  test('when one address is over the failure limit, then another address still gets its own failure codes', async () => {
    const victim = await issueCredential(views);
    for (let i = 0; i < 6; i += 1) await getScore(running, { ...victim, apiKey: `rsk_guess${i}` }, from('203.0.113.9'));

    const elsewhere = await getScore(running, { ...victim, apiKey: 'rsk_typo' }, from('198.51.100.1'));

    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body.code).toBe('INVALID_API_KEY');
  });

  test('when an IPv4-mapped IPv6 address fails, then it counts against its IPv4 address', async () => {
    const victim = await issueCredential(views);
    for (let i = 0; i < 5; i += 1) await getScore(running, { ...victim, apiKey: `rsk_guess${i}` }, from('::ffff:203.0.113.10'));

    const refused = await getScore(running, { ...victim, apiKey: 'rsk_again' }, from('203.0.113.10'));

    expect(refused.status).toBe(429);
  });
});

describe('expiry at request time', () => {
  test('when the clock reaches expiresAt, then the credential stops working although no Expired event arrived', async () => {
    const { running, views, clock } = await aScoredReadApi();
    try {
      const credential = await issueCredential(views, { expiresAt: '2026-11-22T00:00:00.000Z' });
      clock.set('2026-11-21T23:59:59.999Z');
      const before = await getScore(running, credential);

      clock.set('2026-11-22T00:00:00.000Z');
      const at = await getScore(running, credential);

      expect(before.status).toBe(200);
      expect(at.status).toBe(401);
      expect(at.body.code).toBe('CREDENTIAL_INACTIVE');
    } finally {
      await running.close();
    }
  });
});

describe('a rate-limit store that fails', () => {
  test('when the store throws, then requests are served and failures keep their own codes', async () => {
    const failingStores: RateLimitStoreFactory = () => ({
      increment: () => Promise.reject(new Error('store is away')),
      decrement: () => Promise.resolve(),
      resetKey: () => Promise.resolve(),
    });
    const running = await startReadApi({ rateLimitStores: failingStores });
    const { views } = running;
    try {
      const credential = await issueCredential(views);
      await recordScore(views);

      const served = await getScore(running, credential);
      const failed = await getScore(running, { ...credential, apiKey: 'rsk_wrong' });

      expect(served.status).toBe(200);
      expect(failed.status).toBe(401);
      expect(failed.body.code).toBe('INVALID_API_KEY');
    } finally {
      await running.close();
    }
  });
});
