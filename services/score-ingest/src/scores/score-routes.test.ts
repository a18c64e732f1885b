import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scoreCalculatedSchema, TOPICS, type ScoreCalculated, type ScoreSubmission } from '@rsd/contracts';
import { openSqliteEventLog } from '@rsd/embedded';
import { createLogger, createTokenVerifier, loadConfig, UnavailableError } from '@rsd/platform';
import type { EventLog } from '@rsd/ports';
import { aScoreSubmission, request, signToken, startApp, TEST_JWT_SECRET, valuesOn, type RunningApp } from '@rsd/testkit';
import { buildApp } from '../app';
import { scoreIngestConfigSchema } from '../config';

const NOW = new Date('2026-11-20T10:00:00.000Z');

interface Harness {
  app: RunningApp;
  url: string;
  eventLog: EventLog;
  close(): Promise<void>;
}

async function startScoreIngest(wrapLog: (log: EventLog) => EventLog = (log) => log, env: Record<string, string> = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'score-ingest-'));
  const realLog = openSqliteEventLog({ file: join(dir, 'rsd.sqlite') });
  const config = loadConfig(scoreIngestConfigSchema, { JWT_HS256_SECRET: TEST_JWT_SECRET, ...env });
  const app = await startApp(
    buildApp({
      config,
      eventLog: wrapLog(realLog),
      clock: { now: () => NOW },
      log: createLogger('score-ingest', 'silent'),
      verifyToken: createTokenVerifier(config),
    }),
  );
  return {
    app,
    url: `${app.baseUrl}/v1/scores`,
    eventLog: realLog,
    close: async () => {
      await app.close();
      await realLog.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function scoreEventsIn(eventLog: EventLog): Promise<ScoreCalculated[]> {
  return (await valuesOn(eventLog, TOPICS.scores)).map((value) => scoreCalculatedSchema.parse(JSON.parse(value)));
}

async function submit(url: string, body: unknown, token: string) {
  return request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
}

function batchOf(count: number, change: (index: number) => Partial<Record<keyof ScoreSubmission, unknown>> = () => ({})): unknown {
  return {
    scores: Array.from({ length: count }, (_, index) => ({ ...aScoreSubmission({ organizationId: `org-${index}` }), ...change(index) })),
  };
}

describe('score ingest over HTTP', () => {
  let h: Harness;
  let token: string;

  beforeEach(async () => {
    h = await startScoreIngest();
    token = await signToken({ scope: 'scores:write', sub: 'scoring-engine' });
  });
  afterEach(async () => {
    await h.close();
  });

  test('when one score is posted, then 202 and its ScoreCalculated event is in the log, keyed and stamped', async () => {
    const response = await submit(h.url, aScoreSubmission(), token);

    expect(response.status).toBe(202);
    expect(response.body).toEqual({ accepted: 1 });
    const events = await scoreEventsIn(h.eventLog);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ source: '/score-ingest', subject: 'acme', time: NOW.toISOString() });
    expect(events[0]?.data).toEqual({ ...aScoreSubmission(), calculatedAt: NOW.toISOString() });
  });

  test('when calculatedAt is given with an offset, then it is kept, normalised to UTC', async () => {
    await submit(h.url, aScoreSubmission({ calculatedAt: '2026-11-20T08:15:00+01:00' }), token);

    expect((await scoreEventsIn(h.eventLog))[0]?.data.calculatedAt).toBe('2026-11-20T07:15:00.000Z');
  });

  test('when a batch is posted, then 202 counts every score and every one is in the log in order', async () => {
    const response = await submit(h.url, batchOf(3), token);

    expect(response.status).toBe(202);
    expect(response.body).toEqual({ accepted: 3 });
    const events = await scoreEventsIn(h.eventLog);
    expect(events.map((e) => e.data.organizationId)).toEqual(['org-0', 'org-1', 'org-2']);
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
  });

  describe('a token that names an organization (decision 34)', () => {
    let acmeToken: string;

    beforeEach(async () => {
      acmeToken = await signToken({ scope: 'scores:write', org: 'acme' });
    });

    test("when it posts its own organization's score, then 202", async () => {
      const response = await submit(h.url, aScoreSubmission({ organizationId: 'acme' }), acmeToken);

      expect(response.status).toBe(202);
      expect((await scoreEventsIn(h.eventLog)).map((e) => e.data.organizationId)).toEqual(['acme']);
    });

    test('when it posts a score for another organization, then 403 FORBIDDEN_ORGANIZATION and nothing is emitted', async () => {
      const response = await submit(h.url, aScoreSubmission({ organizationId: 'globex' }), acmeToken);

      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ error: 'Forbidden', code: 'FORBIDDEN_ORGANIZATION' });
      expect(await scoreEventsIn(h.eventLog)).toEqual([]);
    });

    test('when one item of a batch is for another organization, then the whole batch is refused and nothing is emitted', async () => {
      const batch = { scores: [aScoreSubmission({ organizationId: 'acme' }), aScoreSubmission({ organizationId: 'globex' })] };

      const response = await submit(h.url, batch, acmeToken);

      expect(response.status).toBe(403);
      expect(response.body.code).toBe('FORBIDDEN_ORGANIZATION');
      expect(response.body.message).toContain('score 1');
      expect(await scoreEventsIn(h.eventLog)).toEqual([]);
    });

    test("when a scoring engine's token (no org claim) posts for several organizations, then all are accepted", async () => {
      const response = await submit(h.url, batchOf(3), token);

      expect(response.status).toBe(202);
    });
  });

  test('when a batch has 1000 scores, then all are accepted', async () => {
    const response = await submit(h.url, batchOf(1000), token);

    expect(response.body).toEqual({ accepted: 1000 });
  });

  test('when one item of a batch is invalid, then 400 names its index and nothing is appended', async () => {
    const response = await submit(
      h.url,
      batchOf(5, (i) => (i === 3 ? { grade: 'Excellent' } : {})),
      token,
    );

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(response.body.details).toEqual([{ index: 3, path: 'scores.3.grade', message: expect.any(String) }]);
    expect(await scoreEventsIn(h.eventLog)).toEqual([]);
  });

  test('when several items are invalid, then every problem of every item is listed, in item order', async () => {
    const response = await submit(
      h.url,
      batchOf(4, (i) => (i === 1 ? { score: 101, scoreDate: '2026-02-30' } : i === 2 ? { colour: 'red' } : {})),
      token,
    );

    expect(response.status).toBe(400);
    const details = response.body.details as { index: number; path: string }[];
    expect(details.map((d) => [d.index, d.path])).toEqual([
      [1, 'scores.1.scoreDate'],
      [1, 'scores.1.score'],
      [2, 'scores.2.colour'],
    ]);
    expect(await scoreEventsIn(h.eventLog)).toEqual([]);
  });

  test('when a batch has 1001 scores, then 400 and nothing is appended', async () => {
    const response = await submit(h.url, batchOf(1001), token);

    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([{ path: 'scores', message: expect.stringContaining('1000') }]);
    expect(await scoreEventsIn(h.eventLog)).toEqual([]);
  });

  test('when a batch is empty, then 400', async () => {
    const response = await submit(h.url, { scores: [] }, token);

    expect(response.status).toBe(400);
    expect(response.body.details[0].path).toBe('scores');
  });

  test.each([
    ['a grade outside the five', { grade: 'Excellent' }, 'grade'],
    ['a lower-case grade', { grade: 'sustain' }, 'grade'],
    ['a non-integer score', { score: 72.5 }, 'score'],
    ['a score of 101', { score: 101 }, 'score'],
    ['a score of -1', { score: -1 }, 'score'],
    ['a score as a string', { score: '72' }, 'score'],
    [
      'a pillar score of 101',
      { pillarScores: { structuralIntegrity: 101, failureResistance: 1, deviceHealth: 1, recoveryCapability: 1 } },
      'pillarScores.structuralIntegrity',
    ],
    [
      'a missing pillar',
      { pillarScores: { structuralIntegrity: 1, failureResistance: 1, deviceHealth: 1 } },
      'pillarScores.recoveryCapability',
    ],
    ['an impossible date', { scoreDate: '2026-02-30' }, 'scoreDate'],
    ['a date-time as scoreDate', { scoreDate: '2026-11-20T00:00:00Z' }, 'scoreDate'],
    ['a scoreDate after today', { scoreDate: '2026-11-21' }, 'scoreDate'],
    ['a calculatedAt in the future', { calculatedAt: '2026-11-20T11:00:00Z' }, 'calculatedAt'],
    ['a calculatedAt without offset', { calculatedAt: '2026-11-20T09:00:00' }, 'calculatedAt'],
    ['a malformed organizationId', { organizationId: 'acme corp' }, 'organizationId'],
    ['an unknown field', { composite: 72 }, 'composite'],
  ])('when a score has %s, then 400 VALIDATION_FAILED names the field and nothing is appended', async (_name, change, path) => {
    const response = await submit(h.url, { ...aScoreSubmission(), ...change }, token);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'Bad Request', code: 'VALIDATION_FAILED' });
    expect(response.body.details).toEqual([{ path, message: expect.any(String) }]);
    expect(await scoreEventsIn(h.eventLog)).toEqual([]);
  });

  test('when the score is for today, then it is accepted', async () => {
    const response = await submit(h.url, aScoreSubmission({ scoreDate: '2026-11-20' }), token);

    expect(response.status).toBe(202);
  });

  test('when the body is not JSON, then 400 MALFORMED_JSON or 415 by its content type', async () => {
    const malformed = await request(h.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: '{"scores":[',
    });
    const wrongType = await request(h.url, {
      method: 'POST',
      headers: { 'content-type': 'text/csv', authorization: `Bearer ${token}` },
      body: 'a,b',
    });

    expect([malformed.status, malformed.body.code]).toEqual([400, 'MALFORMED_JSON']);
    expect([wrongType.status, wrongType.body.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
  });

  test('when the token lacks scores:write, then 403 INSUFFICIENT_SCOPE and nothing is appended', async () => {
    const response = await submit(h.url, aScoreSubmission(), await signToken({ org: 'acme', scope: 'authorizations:write' }));

    expect(response.status).toBe(403);
    expect(response.body.code).toBe('INSUFFICIENT_SCOPE');
    expect(await scoreEventsIn(h.eventLog)).toEqual([]);
  });

  test('when there is no token, then 401 INVALID_TOKEN', async () => {
    const response = await request(h.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(aScoreSubmission()),
    });

    expect(response.status).toBe(401);
    expect(response.body.code).toBe('INVALID_TOKEN');
  });

  test('when GET is sent to /v1/scores, then 405 with Allow: POST', async () => {
    const response = await request(h.url, { headers: { authorization: `Bearer ${token}` } });

    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  test('when health and docs are requested, then they answer', async () => {
    const health = await request(`${h.app.baseUrl}/healthz`);
    const openapi = await request(`${h.app.baseUrl}/v1/openapi.json`);

    expect(health).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(Object.keys(openapi.body.paths)).toEqual(['/scores']);
  });
});

describe('score ingest: limits and failures', () => {
  test('when the body is over the configured limit, then 413 PAYLOAD_TOO_LARGE', async () => {
    const h = await startScoreIngest((log) => log, { SCORE_INGEST_BODY_LIMIT: '1kb' });
    try {
      const response = await submit(h.url, batchOf(10), await signToken({ scope: 'scores:write' }));

      expect(response.status).toBe(413);
      expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
    } finally {
      await h.close();
    }
  });

  test('when the event log fails, then 503 SERVICE_UNAVAILABLE and nothing is appended', async () => {
    const h = await startScoreIngest((log) => ({
      append: () => Promise.reject(new UnavailableError('event log', { cause: new Error('disk full') })),
      subscribe: (options) => log.subscribe(options),
      close: () => log.close(),
    }));
    try {
      const response = await submit(h.url, batchOf(3), await signToken({ scope: 'scores:write' }));

      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({ error: 'Service Unavailable', code: 'SERVICE_UNAVAILABLE' });
      expect(response.body.message).toContain('nothing was accepted');
      expect(response.body.message).not.toContain('disk full');
      expect(await scoreEventsIn(h.eventLog)).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
