import { request, type RunningApp } from '@rsd/testkit';
import { issueCredential, recordScore, type IssuedCredential } from '../testing/read-api-fixtures';
import { startReadApi } from '../testing/read-api-harness';
import type { FeedStaleness } from '@rsd/ports';

describe('read API: a replica whose change feed is stale (decision 29)', () => {
  let running: RunningApp;
  let credential: IssuedCredential;
  const feed = { stale: false };

  beforeAll(async () => {
    const staleness: FeedStaleness = { staleForMs: () => (feed.stale ? 31_000 : 0), isStale: () => feed.stale };
    const readApi = await startReadApi({ staleness });
    running = readApi;
    credential = await issueCredential(readApi.views);
    await recordScore(readApi.views, { organizationId: credential.organizationId });
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
