import type { Scope } from '@rsd/contracts';
import type { ViewStore } from '@rsd/ports';
import { request } from '@rsd/testkit';
import { issueCredential, recordScore, testClock, type IssuedCredential } from '../testing/read-api-fixtures';
import { startReadApi, type RunningReadApi } from '../testing/read-api-harness';
import { cursorAfter } from './history-query';

interface HistoryPage {
  scores: { scoreDate: string; change: unknown }[];
  nextCursor: string | null;
  code?: string;
  message?: string;
}

/** `count` consecutive days ending on 2026-11-20, each scored by its index: easy to check by hand. */
const dayBefore = (days: number) => new Date(Date.UTC(2026, 10, 20) - days * 86_400_000).toISOString().slice(0, 10);

describe('GET /v1/customers/{clientId}/score/history: ranges, pages and explanations (decision 25)', () => {
  let running: RunningReadApi;
  let views: ViewStore;

  beforeAll(async () => {
    running = await startReadApi({ env: { RATE_LIMIT_PER_MINUTE: '100000' }, clock: testClock('2026-11-21T08:00:00.000Z') });
    views = running.views;
  });

  afterAll(() => running.close());

  async function credentialWithDays(days: number, scopes: Scope[] = ['score_trend']): Promise<IssuedCredential> {
    const credential = await issueCredential(views, {
      organizationId: `org-${days}-${scopes.length}-${Math.random().toString(36).slice(2)}`,
      scopes,
    });
    for (let i = 0; i < days; i += 1) {
      await recordScore(views, { organizationId: credential.organizationId, scoreDate: dayBefore(i), score: 100 - (i % 50) });
    }
    return credential;
  }

  const history = (credential: IssuedCredential, query = '') =>
    request<HistoryPage>(`${running.baseUrl}/v1/customers/${credential.clientId}/score/history${query}`, {
      headers: { 'x-api-key': credential.apiKey },
    });

  test('when from and to are given, then both edges are included and nothing outside them', async () => {
    const credential = await credentialWithDays(10);

    const response = await history(credential, `?from=${dayBefore(6)}&to=${dayBefore(3)}`);

    expect(response.status).toBe(200);
    expect(response.body.scores.map((item) => item.scoreDate)).toEqual([dayBefore(3), dayBefore(4), dayBefore(5), dayBefore(6)]);
    expect(response.body.nextCursor).toBeNull();
    expect(response.headers.get('link')).toBeNull();
  });

  test('when the range starts after the oldest snapshot, then its oldest item is still compared with the snapshot before the range', async () => {
    const credential = await credentialWithDays(5);

    const response = await history(credential, `?from=${dayBefore(1)}`);

    // dayBefore(1) scored 99, dayBefore(2) 98: +1, from a snapshot outside the range.
    expect(response.body.scores.at(-1)).toEqual({
      scoreDate: dayBefore(1),
      score: 99,
      grade: 'Strengthen',
      change: { score: 1, grade: null },
    });
    expect((await history(credential, `?from=${dayBefore(4)}`)).body.scores.at(-1)?.change).toBeNull();
  });

  test('when 1,000 snapshots are paged through, then every one comes exactly once, in order, with a Link to each next page', async () => {
    const credential = await credentialWithDays(1000);
    const seen: string[] = [];
    let query = '?limit=37';
    let pages = 0;
    for (;;) {
      const response = await history(credential, query);
      expect(response.status).toBe(200);
      pages += 1;
      seen.push(...response.body.scores.map((item) => item.scoreDate));
      if (response.body.nextCursor === null) {
        expect(response.headers.get('link')).toBeNull();
        break;
      }
      const link = response.headers.get('link')!;
      const next = /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
      expect(next).toBe(`/v1/customers/${credential.clientId}/score/history?limit=37&cursor=${response.body.nextCursor}`);
      query = next!.slice(next!.indexOf('?'));
    }

    expect(pages).toBe(Math.ceil(1000 / 37));
    expect(seen).toEqual(Array.from({ length: 1000 }, (_, i) => dayBefore(i)));
  });

  test('when a range is paged, then the cursor keeps to the range', async () => {
    const credential = await credentialWithDays(30);
    const range = `from=${dayBefore(20)}&to=${dayBefore(10)}`;

    const first = await history(credential, `?${range}&limit=6`);
    const second = await history(credential, `?${range}&limit=6&cursor=${first.body.nextCursor}`);

    expect(first.headers.get('link')).toBe(
      `</v1/customers/${credential.clientId}/score/history?from=${dayBefore(20)}&to=${dayBefore(10)}&limit=6&cursor=${first.body.nextCursor}>; rel="next"`,
    );
    expect([...first.body.scores, ...second.body.scores].map((item) => item.scoreDate)).toEqual(
      Array.from({ length: 11 }, (_, i) => dayBefore(10 + i)),
    );
    expect(second.body.nextCursor).toBeNull();
  });

  test('when the credential also holds pillar_breakdown, then items carry pillar scores, pillar deltas and the driver; without it, none', async () => {
    const withPillars = await issueCredential(views, { organizationId: 'pillar-org', scopes: ['score_trend', 'pillar_breakdown'] });
    const without = await issueCredential(views, { organizationId: 'pillar-org', scopes: ['score_trend'] });
    const pillars = (a: number, b: number, c: number, d: number) => ({
      structuralIntegrity: a,
      failureResistance: b,
      deviceHealth: c,
      recoveryCapability: d,
    });
    await recordScore(views, {
      organizationId: 'pillar-org',
      scoreDate: '2026-11-19',
      score: 60,
      grade: 'Improve',
      pillarScores: pillars(60, 60, 60, 60),
    });
    await recordScore(views, {
      organizationId: 'pillar-org',
      scoreDate: '2026-11-20',
      score: 66,
      grade: 'Strengthen',
      pillarScores: pillars(58, 73, 60, 66),
    });

    const full = await history(withPillars, '?limit=1');
    const plain = await history(without, '?limit=1');

    // Deltas by hand: -2, +13, 0, +6; the largest absolute is failureResistance.
    expect(full.body.scores).toEqual([
      {
        scoreDate: '2026-11-20',
        score: 66,
        grade: 'Strengthen',
        pillarScores: pillars(58, 73, 60, 66),
        change: {
          score: 6,
          grade: { from: 'Improve', to: 'Strengthen' },
          pillars: pillars(-2, 13, 0, 6),
          driver: 'failureResistance',
        },
      },
    ]);
    expect(plain.body.scores).toEqual([
      { scoreDate: '2026-11-20', score: 66, grade: 'Strengthen', change: { score: 6, grade: { from: 'Improve', to: 'Strengthen' } } },
    ]);
    expect(JSON.stringify(plain.body)).not.toContain('pillar');
  });

  /** Each message of a refused history query, with the queries that must get it, named for their tests. */
  const refusals: Record<string, Record<string, string>> = {
    'from must be a calendar date': { 'from is not a date': '?from=2026-13-01', 'from is a date-time': '?from=2026-11-01T00:00:00Z' },
    'to must be a calendar date': { 'to is not a date': '?to=yesterday' },
    'from must not be after to': { 'from is after to': '?from=2026-11-20&to=2026-11-19' },
    'from must be given once': { 'from is repeated': '?from=2026-11-01&from=2026-11-02' },
    'limit must be a whole number from 1 to 366': { 'limit is 0': '?limit=0', 'limit is 367': '?limit=367', 'limit is 1.5': '?limit=1.5' },
    'cursor is not one this API returned': {
      'the cursor is made up': '?cursor=not-a-cursor',
      'the cursor is empty': '?cursor=',
      'the cursor holds no date': `?cursor=${Buffer.from('v1:yesterday').toString('base64url')}`,
      'the cursor is padded base64': `?cursor=${Buffer.from('v1:2026-11-01').toString('base64')}`,
    },
  };

  test.each(
    Object.entries(refusals).flatMap(([message, queries]) => Object.entries(queries).map(([name, query]) => [name, query, message])),
  )('when %s, then 400 INVALID_PARAMETER', async (_case, query, message) => {
    const credential = await credentialWithDays(2);

    const response = await history(credential, query);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'INVALID_PARAMETER', message: expect.stringContaining(message) });
  });

  test('when a cursor this API returned is used, then it is accepted', async () => {
    const credential = await credentialWithDays(3);

    expect((await history(credential, `?cursor=${cursorAfter(dayBefore(0))}`)).body.scores).toHaveLength(2);
  });
});
