import { credentialView, currentScoreView } from '@rsd/domain';
import type { ViewStore } from '@rsd/ports';
import { request, type RunningApp } from '@rsd/testkit';
import { cursorAfter } from './history-query';
import { issueCredential, recordScore, type IssuedCredential } from '../testing/read-api-fixtures';
import { startReadApi } from '../testing/read-api-harness';

let running: RunningApp;
let views: ViewStore;

beforeEach(async () => {
  const readApi = await startReadApi();
  views = readApi.views;
  running = readApi;
});

afterEach(async () => {
  await running.close();
});

const get = (credential: IssuedCredential, resource: string) =>
  request(`${running.baseUrl}/v1/customers/${credential.clientId}/${resource}`, { headers: { 'x-api-key': credential.apiKey } });

describe('GET /v1/customers/{clientId}/score', () => {
  test('when the organization has scores, then the latest comes back with exactly the Score fields and no-store', async () => {
    const credential = await issueCredential(views, { organizationId: 'acme' });
    await recordScore(views, { organizationId: 'acme', scoreDate: '2026-11-19', score: 60, grade: 'Improve' });
    await recordScore(views, { organizationId: 'acme', scoreDate: '2026-11-20', score: 81, grade: 'Optimize' });

    const response = await get(credential, 'score');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ clientId: credential.clientId, scoreDate: '2026-11-20', score: 81, grade: 'Optimize' });
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  test('when two authorizations of one organization read, then both see its score and each gets its own Client ID back', async () => {
    const insurer = await issueCredential(views, { organizationId: 'acme' });
    const auditor = await issueCredential(views, { organizationId: 'acme' });
    await recordScore(views, { organizationId: 'acme', score: 55, grade: 'Improve' });
    await recordScore(views, { organizationId: 'other-org', score: 99, grade: 'Sustain' });

    const [fromInsurer, fromAuditor] = await Promise.all([get(insurer, 'score'), get(auditor, 'score')]);

    expect(fromInsurer.body).toMatchObject({ clientId: insurer.clientId, score: 55 });
    expect(fromAuditor.body).toMatchObject({ clientId: auditor.clientId, score: 55 });
  });

  test('when a score for an older date arrives late, then the latest stays the newest date', async () => {
    const credential = await issueCredential(views);
    await recordScore(views, { scoreDate: '2026-11-20', score: 70 });
    await recordScore(views, { scoreDate: '2026-11-18', score: 10, calculatedAt: '2026-11-21T00:00:00.000Z' });

    const response = await get(credential, 'score');

    expect(response.body).toMatchObject({ scoreDate: '2026-11-20', score: 70 });
  });
});

describe('GET /v1/customers/{clientId}/pillars', () => {
  test('when the organization has scores, then the pillars of the latest come back without a composite', async () => {
    const credential = await issueCredential(views);
    const latest = await recordScore(views, {
      scoreDate: '2026-11-20',
      pillarScores: { structuralIntegrity: 1, failureResistance: 2, deviceHealth: 3, recoveryCapability: 4 },
    });

    const response = await get(credential, 'pillars');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ clientId: credential.clientId, scoreDate: latest.scoreDate, pillarScores: latest.pillarScores });
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});

describe('GET /v1/customers/{clientId}/score/history', () => {
  test('when the organization has scores on several dates, then they come back newest first, limited, each with its change', async () => {
    const credential = await issueCredential(views, { scopes: ['score_trend'] });
    for (const day of ['16', '18', '17', '20', '19']) {
      await recordScore(views, { scoreDate: `2026-11-${day}`, score: Number(day), grade: 'Improve' });
    }

    const response = await request(`${running.baseUrl}/v1/customers/${credential.clientId}/score/history?limit=3`, {
      headers: { 'x-api-key': credential.apiKey },
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      clientId: credential.clientId,
      scores: [
        { scoreDate: '2026-11-20', score: 20, grade: 'Improve', change: { score: 1, grade: null } },
        { scoreDate: '2026-11-19', score: 19, grade: 'Improve', change: { score: 1, grade: null } },
        { scoreDate: '2026-11-18', score: 18, grade: 'Improve', change: { score: 1, grade: null } },
      ],
      nextCursor: cursorAfter('2026-11-18'),
    });
  });

  test('when no limit is given, then at most 30 dates come back', async () => {
    const credential = await issueCredential(views);
    for (let day = 1; day <= 31; day += 1) {
      await recordScore(views, { scoreDate: `2026-10-${String(day).padStart(2, '0')}` });
    }

    const response = await get(credential, 'score/history');

    expect(response.body.scores).toHaveLength(30);
    expect(response.body.scores[0].scoreDate).toBe('2026-10-31');
  });

  test('when the organization has no scores yet, then the history is an empty list', async () => {
    const credential = await issueCredential(views, { organizationId: 'new-customer' });

    const response = await get(credential, 'score/history');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ clientId: credential.clientId, scores: [], nextCursor: null });
  });
});

describe('request path I/O', () => {
  test('when a score is read, then exactly one credential lookup and one score lookup happen', async () => {
    const credential = await issueCredential(views);
    await recordScore(views);
    const lookups = jest.spyOn(views, 'get');

    const response = await get(credential, 'score');

    expect(response.status).toBe(200);
    expect(lookups.mock.calls.map(([view, key]) => [view.name, key])).toEqual([
      [credentialView.name, credential.clientId],
      [currentScoreView.name, credential.organizationId],
    ]);
  });
});
