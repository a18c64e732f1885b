import { createMemoryViewStore, memoryRateLimitStores } from '@rsd/embedded';
import { createLogger, loadConfig } from '@rsd/platform';
import { request, startApp, type RunningApp } from '@rsd/testkit';
import { buildApp } from '../app';
import { readApiConfigSchema } from '../config';
import { issueCredential, recordScore, testClock, type IssuedCredential, testSigningKeys } from '../testing/read-api-fixtures';
import type { FeedStaleness } from '../views/feed-staleness';

describe('read API: a replica whose change feed is stale (decision 29)', () => {
  let running: RunningApp;
  let credential: IssuedCredential;
  const feed = { stale: false };

  beforeAll(async () => {
    const views = createMemoryViewStore();
    const staleness: FeedStaleness = { staleForMs: () => (feed.stale ? 31_000 : 0), isStale: () => feed.stale };
    const app = buildApp({
      signingKeys: testSigningKeys(),
      config: loadConfig(readApiConfigSchema, {}),
      views,
      staleness,
      rateLimitStores: memoryRateLimitStores,
      clock: testClock(),
      log: createLogger('read-api', 'silent'),
    });
    credential = await issueCredential(views);
    await recordScore(views, { organizationId: credential.organizationId });
    running = await startApp(app);
  });

  afterAll(() => running.close());
  afterEach(() => (feed.stale = false));

  const read = (resource: string, headers: Record<string, string> = { 'x-api-key': credential.apiKey }) =>
    request(`${running.baseUrl}/v1/customers/${credential.clientId}/${resource}`, { headers });

  test('when the feed is stale, then every customer resource answers 503 SERVICE_UNAVAILABLE with Retry-After, and never the data', async () => {
    feed.stale = true;

    for (const resource of ['score', 'pillars', 'score/history']) {
      const answer = await read(resource);
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({ error: 'Service Unavailable', code: 'SERVICE_UNAVAILABLE' });
      expect(answer.headers.get('retry-after')).toBe('5');
      expect(answer.headers.get('cache-control')).toBe('no-store');
    }
  });

  test('when the feed is stale, then the check comes before any credential check: a missing key is 503 too', async () => {
    feed.stale = true;

    expect((await read('score', {})).status).toBe(503);
  });

  test('when the feed is fresh again, then the same request is served', async () => {
    feed.stale = true;
    expect((await read('score')).status).toBe(503);

    feed.stale = false;
    const answer = await read('score');

    expect(answer.status).toBe(200);
    expect(answer.body.clientId).toBe(credential.clientId);
  });

  test('when the feed is stale, then health and docs still answer: only customer data is withheld', async () => {
    feed.stale = true;

    expect((await request(`${running.baseUrl}/healthz`)).status).toBe(200);
    expect((await request(`${running.baseUrl}/v1/openapi.json`)).status).toBe(200);
  });
});
