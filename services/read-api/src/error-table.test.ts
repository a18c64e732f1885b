import { READ_VIEWS, generateApiKey } from '@rsd/domain';
import { type ViewStore } from '@rsd/ports';
import { projectEvent } from '@rsd/consumers';
import { request, type RunningApp } from '@rsd/testkit';
import {
  authorizationExpiredEvent,
  issueCredential,
  recordScore,
  revokeCredential,
  testClock,
  type IssuedCredential,
} from './testing/read-api-fixtures';
import { startReadApi } from './testing/read-api-harness';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BLOCKED_AGENT = 'EvilScanner/2.0';

interface World {
  running: RunningApp;
  views: ViewStore;
  active: IssuedCredential;
  noScore: IssuedCredential;
  scoreOnly: IssuedCredential;
  revoked: IssuedCredential;
  expiredByEvent: IssuedCredential;
  expiredByClock: IssuedCredential;
  limited: IssuedCredential;
}

let world: World;

beforeAll(async () => {
  const running = await startReadApi({
    env: { RATE_LIMIT_PER_MINUTE: '3', EDGE_BLOCKED_USER_AGENTS: '^evilscanner/' },
    clock: testClock('2026-11-21T08:00:00.000Z'),
  });
  const { views } = running;
  const expiredByEvent = await issueCredential(views);
  await projectEvent(views, READ_VIEWS, authorizationExpiredEvent(expiredByEvent));
  const revoked = await issueCredential(views, { scopes: ['pillar_breakdown'] });
  await revokeCredential(views, revoked);
  await recordScore(views, { organizationId: 'acme' });
  world = {
    running,
    views,
    active: await issueCredential(views),
    noScore: await issueCredential(views, { organizationId: 'no-scores-yet' }),
    scoreOnly: await issueCredential(views, { scopes: ['qr_score'] }),
    revoked,
    expiredByEvent,
    expiredByClock: await issueCredential(views, { expiresAt: '2026-11-21T08:00:00.000Z' }),
    limited: await issueCredential(views),
  };
});

afterAll(async () => {
  await world.running.close();
});

function call(path: string, init: { apiKey?: string; method?: string; userAgent?: string } = {}) {
  const headers: Record<string, string> = {};
  if (init.apiKey !== undefined) headers['x-api-key'] = init.apiKey;
  if (init.userAgent !== undefined) headers['user-agent'] = init.userAgent;
  return request(`${world.running.baseUrl}${path}`, { method: init.method ?? 'GET', headers });
}

const score = (credential: IssuedCredential) => `/v1/customers/${credential.clientId}/score`;
const pillars = (credential: IssuedCredential) => `/v1/customers/${credential.clientId}/pillars`;
const history = (credential: IssuedCredential) => `/v1/customers/${credential.clientId}/score/history`;
const wellFormedUnknown = 'rs_0123456789abcdefABCDEF';

type Send = (w: World) => ReturnType<typeof call>;

interface Row {
  name: string;
  send: Send;
  status: number;
  error: string;
  code: string | undefined;
}

/** The rows of the requests that must all get one answer of the table, each named for its test. */
function answered(status: number, error: string, code: string | undefined, requests: Record<string, Send>): Row[] {
  return Object.entries(requests).map(([name, send]) => ({ name, send, status, error, code }));
}

const rows: Row[] = [
  // 1 edge policy
  ...answered(403, 'Forbidden', undefined, {
    'the user agent is blocked by the edge policy': (w) => call(score(w.active), { apiKey: w.active.apiKey, userAgent: BLOCKED_AGENT }),
  }),
  // 2 Client ID missing
  ...answered(400, 'Bad Request', 'MISSING_CLIENT_ID', {
    'the Client ID segment is empty': (w) => call('/v1/customers//score', { apiKey: w.active.apiKey }),
    'the Client ID is only an encoded space': (w) => call('/v1/customers/%20/pillars', { apiKey: w.active.apiKey }),
    'the score path has no Client ID segment': (w) => call('/v1/customers/score', { apiKey: w.active.apiKey }),
    'the pillars path has no Client ID segment': (w) => call('/v1/customers/pillars', { apiKey: w.active.apiKey }),
    'the history path has no Client ID segment': (w) => call('/v1/customers/score/history', { apiKey: w.active.apiKey }),
  }),
  // 3 Client ID format
  ...answered(400, 'Bad Request', 'INVALID_CLIENT_ID', {
    'the Client ID has the wrong format': (w) => call('/v1/customers/acme/score', { apiKey: w.active.apiKey }),
    'the Client ID has another prefix': (w) => call(`/v1/customers/xx_${w.active.clientId.slice(3)}/score`, { apiKey: w.active.apiKey }),
  }),
  // 4 API key missing
  ...answered(401, 'Unauthorized', 'MISSING_API_KEY', {
    'the x-api-key header is absent': (w) => call(score(w.active)),
    'the x-api-key header is empty': (w) => call(score(w.active), { apiKey: '' }),
  }),
  // 5 no credential
  ...answered(404, 'Not Found', 'CREDENTIAL_NOT_FOUND', {
    'no credential exists for the Client ID': (w) => call(`/v1/customers/${wellFormedUnknown}/score`, { apiKey: w.active.apiKey }),
  }),
  // 6 key does not verify
  ...answered(401, 'Unauthorized', 'INVALID_API_KEY', {
    'the key belongs to another credential': (w) => call(score(w.active), { apiKey: w.noScore.apiKey }),
    'the key fails its checksum': (w) =>
      call(score(w.active), { apiKey: `${w.active.apiKey.slice(0, -1)}${w.active.apiKey.endsWith('A') ? 'B' : 'A'}` }),
    'the key is well formed but was never issued': (w) => call(score(w.active), { apiKey: generateApiKey('rsk') }),
    'the key has another prefix': (w) => call(score(w.active), { apiKey: `abc${w.active.apiKey.slice(3)}` }),
  }),
  // 7 credential not active
  ...answered(401, 'Unauthorized', 'CREDENTIAL_INACTIVE', {
    'the credential was revoked': (w) => call(pillars(w.revoked), { apiKey: w.revoked.apiKey }),
    'the credential expired by event': (w) => call(score(w.expiredByEvent), { apiKey: w.expiredByEvent.apiKey }),
    'the credential reached its expiresAt with no event yet': (w) => call(score(w.expiredByClock), { apiKey: w.expiredByClock.apiKey }),
  }),
  // 8 per-credential rate limit (3 per minute in this app)
  ...answered(429, 'Too Many Requests', undefined, {
    'the credential is over its rate limit': async (w) => {
      for (let i = 0; i < 3; i += 1) await call(score(w.limited), { apiKey: w.limited.apiKey });
      return call(score(w.limited), { apiKey: w.limited.apiKey });
    },
  }),
  // 9 scope
  ...answered(403, 'Forbidden', 'INSUFFICIENT_SCOPE', {
    'the pillar_breakdown scope was not granted': (w) => call(pillars(w.scoreOnly), { apiKey: w.scoreOnly.apiKey }),
    'the score_trend scope was not granted': (w) => call(history(w.scoreOnly), { apiKey: w.scoreOnly.apiKey }),
  }),
  // 10 no data
  ...answered(404, 'Not Found', 'SCORE_NOT_FOUND', {
    'no score has been calculated yet': (w) => call(score(w.noScore), { apiKey: w.noScore.apiKey }),
  }),
  ...answered(404, 'Not Found', 'PILLARS_NOT_FOUND', {
    'no pillar breakdown has been calculated yet': (w) => call(pillars(w.noScore), { apiKey: w.noScore.apiKey }),
  }),
  // outside the order of checks
  ...answered(400, 'Bad Request', 'INVALID_PARAMETER', {
    'the history limit is out of range': (w) => call(`${history(w.active)}?limit=367`, { apiKey: w.active.apiKey }),
  }),
  ...answered(404, 'Not Found', 'ROUTE_NOT_FOUND', { 'the path is unknown': () => call('/v1/nothing-here') }),
  ...answered(405, 'Method Not Allowed', 'METHOD_NOT_ALLOWED', {
    'the method is not GET or HEAD': (w) => call(score(w.active), { apiKey: w.active.apiKey, method: 'POST' }),
  }),
];

describe('the error table', () => {
  test.each(rows.map((row) => ({ ...row, shown: row.code ?? 'without a code' })))('when $name, then $status $shown', async (row) => {
    const response = await row.send(world);

    expect(response.status).toBe(row.status);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body.error).toBe(row.error);
    if (row.code === undefined) expect(response.body).not.toHaveProperty('code');
    else expect(response.body.code).toBe(row.code);
    expect(typeof response.body.message).toBe('string');
    expect(response.body.message.length).toBeGreaterThan(0);
    expect(response.body.timestamp).toMatch(TIMESTAMP);
  });

  test('when a 405 is answered, then Allow names GET and HEAD', async () => {
    const response = await call(score(world.active), { apiKey: world.active.apiKey, method: 'DELETE' });

    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('the order of checks: when two failures are present, the first wins', () => {
  test.each([
    {
      name: 'an invalid Client ID and no key',
      send: () => call('/v1/customers/not-a-client/score'),
      code: 'INVALID_CLIENT_ID',
    },
    {
      name: 'a missing Client ID and no key',
      send: () => call('/v1/customers//pillars'),
      code: 'MISSING_CLIENT_ID',
    },
    {
      name: 'no key and an unknown Client ID',
      send: () => call(`/v1/customers/${wellFormedUnknown}/score`),
      code: 'MISSING_API_KEY',
    },
    {
      name: 'an unknown Client ID and a bad key',
      send: () => call(`/v1/customers/${wellFormedUnknown}/score`, { apiKey: 'rsk_nonsense' }),
      code: 'CREDENTIAL_NOT_FOUND',
    },
    {
      name: 'a revoked credential and a bad key',
      send: () => call(pillars(world.revoked), { apiKey: world.active.apiKey }),
      code: 'INVALID_API_KEY',
    },
    {
      name: 'a revoked credential and a scope it lacks',
      send: () => call(score(world.revoked), { apiKey: world.revoked.apiKey }),
      code: 'CREDENTIAL_INACTIVE',
    },
    {
      name: 'a scope the credential lacks and no data for its organization',
      send: async () => {
        const lacking = await issueCredential(world.views, { organizationId: 'no-scores-yet', scopes: ['qr_score'] });
        return call(pillars(lacking), { apiKey: lacking.apiKey });
      },
      code: 'INSUFFICIENT_SCOPE',
    },
  ])('when $name, then $code', async ({ send, code }) => {
    const response = await send();

    expect(response.body.code).toBe(code);
  });

  test('when the edge blocks a request that is wrong in every other way too, then 403 without a code', async () => {
    const response = await call('/v1/customers/%FF/score', { userAgent: 'evilscanner/1', method: 'GET' });

    expect(response.status).toBe(403);
    expect(response.body).not.toHaveProperty('code');
    expect(response.body.error).toBe('Forbidden');
  });

  test('when a credential is over its rate limit and lacks the scope, then 429 (the limit is checked first)', async () => {
    const lacking = await issueCredential(world.views, { scopes: ['qr_score'] });
    for (let i = 0; i < 3; i += 1) await call(pillars(lacking), { apiKey: lacking.apiKey });

    const response = await call(pillars(lacking), { apiKey: lacking.apiKey });

    expect(response.status).toBe(429);
    expect(response.body).not.toHaveProperty('code');
  });

  test('when the Client ID is invalid, then no credential lookup happens', async () => {
    const lookup = jest.spyOn(world.views, 'get');
    try {
      const responses = await Promise.all(
        ['acme', '%FF', 'rs_%2F0123456789abcdef', `${world.active.clientId}%20`, world.active.clientId.toUpperCase(), '%E0%A4%A'].map(
          (id) => call(`/v1/customers/${id}/score`, { apiKey: world.active.apiKey }),
        ),
      );

      expect(responses.map((r): unknown => r.body.code)).toEqual(Array(6).fill('INVALID_CLIENT_ID'));
      expect(lookup).not.toHaveBeenCalled();
    } finally {
      lookup.mockRestore();
    }
  });
});
