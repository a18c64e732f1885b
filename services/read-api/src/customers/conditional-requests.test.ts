import type { ViewStore } from '@rsd/ports';
import { issueCredential, recordScore, type IssuedCredential } from '../testing/read-api-fixtures';
import { startReadApi, type RunningReadApi } from '../testing/read-api-harness';

describe('conditional requests (decision 23)', () => {
  let running: RunningReadApi;
  let views: ViewStore;
  let credential: IssuedCredential;

  beforeEach(async () => {
    running = await startReadApi({ env: { RATE_LIMIT_PER_MINUTE: '4' } });
    views = running.views;
    credential = await issueCredential(views);
    await recordScore(views, { organizationId: credential.organizationId, scoreDate: '2026-11-20', score: 70 });
  });

  afterEach(() => running.close());

  const read = (resource: string, headers: Record<string, string> = {}) =>
    fetch(`${running.baseUrl}/v1/customers/${credential.clientId}/${resource}`, {
      headers: { 'x-api-key': credential.apiKey, ...headers },
    });

  test.each(['score', 'pillars', 'score/history'])('when %s is read, then the 200 carries a strong ETag', async (resource) => {
    const response = await read(resource);

    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
  });

  test('when the ETag is sent back in If-None-Match, then the answer is 304 without a body, with the same ETag, Cache-Control and rate-limit headers', async () => {
    const first = await read('score');
    const etag = first.headers.get('etag')!;

    const again = await read('score', { 'if-none-match': etag });

    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toBe('no-store');
    expect(again.headers.get('ratelimit')).toMatch(/^"credential"; r=2; t=\d+$/);
    expect(again.headers.get('signature')).toBeNull();
  });

  test('when If-None-Match lists the ETag among others, weakly or as *, then it matches as RFC 9110 says', async () => {
    const etag = (await read('score')).headers.get('etag')!;

    expect((await read('score', { 'if-none-match': `"other", W/${etag}` })).status).toBe(304);
    expect((await read('score', { 'if-none-match': '*' })).status).toBe(304);
    expect((await read('score', { 'if-none-match': '"someone-elses"' })).status).toBe(200);
  });

  test('when the score changes, then the ETag changes and the old one gets the new body', async () => {
    const etag = (await read('score')).headers.get('etag')!;
    await recordScore(views, { organizationId: credential.organizationId, scoreDate: '2026-11-21', score: 75 });

    const changed = await read('score', { 'if-none-match': etag });

    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(((await changed.json()) as { score: number }).score).toBe(75);
  });

  test('when a 304 is answered, then it counts against the rate limit like a 200', async () => {
    const etag = (await read('score')).headers.get('etag')!;
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await read('score', { 'if-none-match': etag })).status);

    expect(statuses).toEqual([304, 304, 304, 429]);
  });

  test('when the ETag of one resource is sent to another, then it does not match', async () => {
    const etag = (await read('score')).headers.get('etag')!;

    expect((await read('pillars', { 'if-none-match': etag })).status).toBe(200);
  });

  test('when two grants of one organization read its score and pillars in turn, then each gets its own body, the same every time', async () => {
    const other = await issueCredential(views, { organizationId: credential.organizationId });
    const readAs = async ({ clientId, apiKey }: IssuedCredential, resource: string) =>
      (await fetch(`${running.baseUrl}/v1/customers/${clientId}/${resource}`, { headers: { 'x-api-key': apiKey } })).json();

    const rounds = [];
    for (let round = 0; round < 2; round += 1) {
      rounds.push([
        await readAs(credential, 'score'),
        await readAs(other, 'score'),
        await readAs(credential, 'pillars'),
        await readAs(other, 'pillars'),
      ]);
    }

    expect(rounds[1]).toEqual(rounds[0]);
    const [mine, theirs, myPillars, theirPillars] = rounds[0] as Record<string, unknown>[];
    expect([mine, theirs, myPillars, theirPillars].map((body) => body!.clientId)).toEqual([
      credential.clientId,
      other.clientId,
      credential.clientId,
      other.clientId,
    ]);
    expect(mine).toHaveProperty('score', 70);
    expect(myPillars).toHaveProperty('pillarScores');
    expect(myPillars).not.toHaveProperty('score');
  });
});
