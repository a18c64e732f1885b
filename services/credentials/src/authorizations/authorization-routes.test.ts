import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { authorizationCreatedSchema, clientIdPattern, EVENT_TYPES, TOPICS } from '@rsd/contracts';
import { digestApiKey, hasValidChecksum } from '@rsd/domain';
import type { EventLog } from '@rsd/ports';
import { request, signToken, valuesOn } from '@rsd/testkit';
import {
  NOW,
  startCredentials,
  type CredentialsHarness,
  type CredentialsHarnessOptions,
} from '../../../../test/support/credentials-harness';

const ORG = 'acme';

interface Harness extends CredentialsHarness {
  url(path: string): string;
  /** Every byte the adapters wrote: the database and its write-ahead log, where recent commits sit. */
  storedBytes(): Promise<string>;
}

/** The real app over the real embedded adapters in a temp dir; `wrapEventLog` may put a faulty event log in front. */
async function startApi(options: CredentialsHarnessOptions = {}): Promise<Harness> {
  const h = await startCredentials(options);
  return {
    ...h,
    url: (path) => `${h.app.baseUrl}/v1/organizations/${path}`,
    storedBytes: async () => {
      const files = (await readdir(h.dir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
      const contents = await Promise.all(files.map((entry) => readFile(join(entry.parentPath, entry.name), 'latin1')));
      expect(files.map((entry) => entry.name)).toContain('rsd.sqlite-wal');
      return contents.join('\n');
    },
  };
}

async function adminToken(org = ORG, scope = 'authorizations:write'): Promise<string> {
  return signToken({ org, scope, sub: 'admin@acme' });
}

async function post(url: string, body: unknown, token?: string, headers: Record<string, string> = {}) {
  return request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function get(url: string, token?: string) {
  return request(url, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
}

async function eventsIn(eventLog: EventLog): Promise<{ type: string; data: Record<string, unknown> }[]> {
  return (await valuesOn(eventLog, TOPICS.authorizations)).map(
    (value) => JSON.parse(value) as { type: string; data: Record<string, unknown> },
  );
}

function pathsOf(body: { details?: { path: string }[] }): string[] {
  return (body.details ?? []).map((detail) => detail.path);
}

const validBody = { recipientType: 'insurance_provider', recipientName: 'Acme Insurance', scopes: ['qr_score', 'pillar_breakdown'] };

let h: Harness;
let token: string;

/** Every test of the block that calls this gets a service of its own and an admin token. */
function withAServicePerTest(): void {
  beforeEach(async () => {
    h = await startApi();
    token = await adminToken();
  });
  afterEach(async () => {
    await h.close();
  });
}

describe('credentials service: authorizations over HTTP', () => {
  withAServicePerTest();

  describe('create', () => {
    test('when an authorization is created, then 201 answers a checksummed key once and stores only its digest', async () => {
      const response = await post(h.url(`${ORG}/authorizations`), validBody, token);

      expect(response.status).toBe(201);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const { apiKey, clientId } = response.body;
      expect(apiKey).toMatch(/^rsk_[0-9A-Za-z]{49}$/);
      expect(hasValidChecksum(apiKey, 'rsk')).toBe(true);
      expect(clientId).toMatch(clientIdPattern('rs'));
      expect(response.headers.get('location')).toBe(`/v1/organizations/${ORG}/authorizations/${clientId}`);
      expect(response.body).toEqual({
        clientId,
        apiKey,
        organizationId: ORG,
        recipientType: 'insurance_provider',
        recipientName: 'Acme Insurance',
        scopes: ['qr_score', 'pillar_breakdown'],
        expiresAt: null,
        status: 'active',
        createdAt: NOW.toISOString(),
        revokedAt: null,
        allowedCidrs: null,
        lastUsedAt: null,
        usage: { last24h: 0, last30d: 0 },
        keyClaimed: true,
        claimedAt: null,
        claimedFromAddress: null,
        revocationReason: null,
        recipientAccountId: null,
        recipientAccountName: null,
      });
      const stored = await h.store.find(ORG, clientId);
      expect(stored?.keyDigest).toBe(digestApiKey(apiKey));
      expect(await h.storedBytes()).not.toContain(apiKey);
    });

    test('when an authorization is created, then its Created event is in the log with the digest and the key is nowhere in the file', async () => {
      const response = await post(h.url(`${ORG}/authorizations`), validBody, token);

      const events = await eventsIn(h.eventLog);
      expect(events).toHaveLength(1);
      const event = authorizationCreatedSchema.parse(events[0]);
      expect(event.source).toBe('/credentials');
      expect(event.subject).toBe(response.body.clientId);
      expect(event.data).toMatchObject({ clientId: response.body.clientId, keyDigest: digestApiKey(response.body.apiKey), revision: 1 });
      expect(await h.storedBytes()).not.toContain(response.body.apiKey);
      expect(await h.store.pendingOutbox(10)).toEqual([]);
    });

    test('when expiresAt is a date, then it is stored as the first instant of the next UTC day', async () => {
      const response = await post(h.url(`${ORG}/authorizations`), { ...validBody, expiresAt: '2026-12-31' }, token);

      expect(response.status).toBe(201);
      expect(response.body.expiresAt).toBe('2027-01-01T00:00:00.000Z');
    });

    test('when expiresAt is today, then it is accepted: the credential works until midnight UTC', async () => {
      const response = await post(h.url(`${ORG}/authorizations`), { ...validBody, expiresAt: '2026-11-20' }, token);

      expect(response.status).toBe(201);
      expect(response.body.expiresAt).toBe('2026-11-21T00:00:00.000Z');
    });

    test('when expiresAt is a date-time with an offset, then it is normalised to UTC with milliseconds', async () => {
      const response = await post(h.url(`${ORG}/authorizations`), { ...validBody, expiresAt: '2026-12-01T09:30:00+02:00' }, token);

      expect(response.status).toBe(201);
      expect(response.body.expiresAt).toBe('2026-12-01T07:30:00.000Z');
    });

    test.each([
      ['a past date', '2026-11-19'],
      ['a past instant', '2026-11-20T09:59:59Z'],
      ['the present instant', '2026-11-20T10:00:00.000Z'],
    ])('when expiresAt is %s, then 400 VALIDATION_FAILED names expiresAt', async (_name, expiresAt) => {
      const response = await post(h.url(`${ORG}/authorizations`), { ...validBody, expiresAt }, token);

      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_FAILED');
      expect(response.body.details).toEqual([{ path: 'expiresAt', message: 'must be in the future' }]);
    });

    test.each([
      ['an unknown recipientType', { ...validBody, recipientType: 'bank' }, ['recipientType']],
      ['empty scopes', { ...validBody, scopes: [] }, ['scopes']],
      ['a repeated scope', { ...validBody, scopes: ['qr_score', 'qr_score'] }, ['scopes']],
      ['an unknown scope', { ...validBody, scopes: ['everything'] }, ['scopes.0']],
      ['an unknown field', { ...validBody, apiKey: 'mine' }, ['apiKey']],
      ['a missing recipientType', { scopes: ['qr_score'] }, ['recipientType']],
      ['a number for recipientName', { ...validBody, recipientName: 5 }, ['recipientName']],
      ['a blank recipientName', { ...validBody, recipientName: '   ' }, ['recipientName']],
      ['a string for scopes', { ...validBody, scopes: 'qr_score' }, ['scopes']],
      ['an expiresAt that is no date', { ...validBody, expiresAt: 'tomorrow' }, ['expiresAt']],
      ['an impossible date', { ...validBody, expiresAt: '2027-02-30' }, ['expiresAt']],
      ['an array body', [validBody], ['']],
    ])('when the body has %s, then 400 VALIDATION_FAILED names the field', async (_name, body, paths) => {
      const response = await post(h.url(`${ORG}/authorizations`), body, token);

      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: 'Bad Request', code: 'VALIDATION_FAILED' });
      expect(pathsOf(response.body)).toEqual(paths);
      expect(await h.store.list(ORG)).toEqual([]);
    });

    test('when the body has several problems, then every one is listed at once', async () => {
      const response = await post(
        h.url(`${ORG}/authorizations`),
        { recipientType: 'bank', scopes: [], expiresAt: '2020-01-01', colour: 'red', size: 2 },
        token,
      );

      expect(response.status).toBe(400);
      expect(pathsOf(response.body).sort()).toEqual(['colour', 'expiresAt', 'recipientType', 'scopes', 'size'].sort());
    });

    test('when the body is not valid JSON, then 400 MALFORMED_JSON', async () => {
      const response = await post(h.url(`${ORG}/authorizations`), '{"recipientType":', token);

      expect(response.status).toBe(400);
      expect(response.body.code).toBe('MALFORMED_JSON');
    });

    test('when the body is not JSON, then 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const response = await post(h.url(`${ORG}/authorizations`), 'recipientType=auditor', token, { 'content-type': 'text/plain' });

      expect(response.status).toBe(415);
      expect(response.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    });

    test('when the body is over 16 kB, then 413 PAYLOAD_TOO_LARGE', async () => {
      const response = await post(h.url(`${ORG}/authorizations`), { ...validBody, recipientName: 'x'.repeat(17 * 1024) }, token);

      expect(response.status).toBe(413);
      expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
    });

    test('when there is no body at all, then 400 VALIDATION_FAILED', async () => {
      const response = await request(h.url(`${ORG}/authorizations`), { method: 'POST', headers: { authorization: `Bearer ${token}` } });

      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_FAILED');
    });
  });

  describe('caller authentication', () => {
    test('when no token is sent, then 401 INVALID_TOKEN with a Bearer challenge', async () => {
      const response = await post(h.url(`${ORG}/authorizations`), validBody);

      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ error: 'Unauthorized', code: 'INVALID_TOKEN' });
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
    });

    test.each([
      ['a malformed token', () => Promise.resolve('not-a-jwt')],
      [
        'a token signed with another secret',
        () => signToken({ org: ORG, scope: 'authorizations:write' }, { secret: 'another-secret-that-is-at-least-32-chars' }),
      ],
      ['an expired token', () => signToken({ org: ORG, scope: 'authorizations:write' }, { expiresIn: '-1m' })],
    ])('when the caller sends %s, then 401 INVALID_TOKEN', async (_name, makeToken) => {
      const response = await post(h.url(`${ORG}/authorizations`), validBody, await makeToken());

      expect(response.status).toBe(401);
      expect(response.body.code).toBe('INVALID_TOKEN');
      expect(await h.store.list(ORG)).toEqual([]);
    });

    test.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])(
      'when the scheme is written %s, then the token is accepted (schemes are case-insensitive, decision 33)',
      async (scheme) => {
        const response = await request(h.url(`${ORG}/authorizations`), { headers: { authorization: `${scheme} ${token}` } });

        expect(response.status).toBe(200);
      },
    );

    test.each([
      ['another scheme', (t: string) => `Basic ${t}`],
      ['no scheme', (t: string) => t],
      ['the scheme glued to the token', (t: string) => `Bearer${t}`],
      ['two tokens', (t: string) => `Bearer ${t} ${t}`],
    ])('when the header has %s, then 401 INVALID_TOKEN', async (_name, header) => {
      const response = await request(h.url(`${ORG}/authorizations`), { headers: { authorization: header(token) } });

      expect(response.status).toBe(401);
      expect(response.body.code).toBe('INVALID_TOKEN');
    });

    test('when the token administers another organization, then 403 FORBIDDEN_ORGANIZATION', async () => {
      const response = await post(h.url(`${ORG}/authorizations`), validBody, await adminToken('globex'));

      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ error: 'Forbidden', code: 'FORBIDDEN_ORGANIZATION' });
    });

    test('when the token lacks authorizations:write, then 403 INSUFFICIENT_SCOPE on every route', async () => {
      const weak = await adminToken(ORG, 'scores:write');

      const responses = await Promise.all([
        post(h.url(`${ORG}/authorizations`), validBody, weak),
        get(h.url(`${ORG}/authorizations`), weak),
        get(h.url(`${ORG}/authorizations/rs_AAAAAAAAAAAAAAAAAAAAAAAA`), weak),
        post(h.url(`${ORG}/authorizations/rs_AAAAAAAAAAAAAAAAAAAAAAAA/revoke`), undefined, weak),
      ]);

      expect(responses.map((r): [number, string] => [r.status, String(r.body.code)])).toEqual(
        Array.from({ length: 4 }, () => [403, 'INSUFFICIENT_SCOPE']),
      );
    });

    test('when the organization id is malformed, then 400 INVALID_ORGANIZATION_ID', async () => {
      const response = await get(h.url('not%20valid/authorizations'), token);

      expect(response.status).toBe(400);
      expect(response.body.code).toBe('INVALID_ORGANIZATION_ID');
    });
  });

  describe('list and get', () => {
    test('when authorizations are listed, then they come newest first without any key or digest', async () => {
      const first = await post(h.url(`${ORG}/authorizations`), validBody, token);
      h.clock.set(new Date(NOW.getTime() + 1000));
      const second = await post(h.url(`${ORG}/authorizations`), { recipientType: 'auditor', scopes: ['score_trend'] }, token);

      const response = await get(h.url(`${ORG}/authorizations`), token);

      expect(response.status).toBe(200);
      const listed = response.body.authorizations as { clientId: string }[];
      expect(listed.map((a) => a.clientId)).toEqual([second.body.clientId, first.body.clientId]);
      expect(response.body.authorizations[0]).toEqual({ ...second.body, apiKey: undefined, recipientName: null });
      const text = JSON.stringify(response.body);
      expect(text).not.toContain(first.body.apiKey);
      expect(text).not.toContain('apiKey');
      expect(text).not.toContain('keyDigest');
    });

    test('when the list is filtered and paged (decision 54), then every match comes once, newest first; without limit or cursor, all at once', async () => {
      const made: { clientId: string; recipientType: string; scopes: string[] }[] = [];
      for (let n = 0; n < 7; n += 1) {
        h.clock.set(new Date(NOW.getTime() + n * 1000));
        const body =
          n % 2 === 0
            ? { recipientType: 'auditor', scopes: ['qr_score', 'score_trend'] }
            : { recipientType: 'partner', scopes: ['qr_score'] };
        made.push((await post(h.url(`${ORG}/authorizations`), { ...body, ...(n === 2 ? { expiresAt: '2026-12-01' } : {}) }, token)).body);
      }
      await post(h.url(`${ORG}/authorizations/${made[4]!.clientId}/revoke`), {}, token);
      const ids = (body: { authorizations: { clientId: string }[] }) => body.authorizations.map((grant) => grant.clientId);
      const auditors = made
        .filter((_, n) => n % 2 === 0)
        .map((grant) => grant.clientId)
        .reverse();

      const pages: string[][] = [];
      for (let cursor: string | null = ''; cursor !== null;) {
        const page = await get(
          h.url(`${ORG}/authorizations?recipientType=auditor&scope=score_trend&limit=3${cursor ? `&cursor=${cursor}` : ''}`),
          token,
        );
        expect(page.status).toBe(200);
        pages.push(ids(page.body));
        cursor = page.body.nextCursor as string | null;
      }
      const all = await get(h.url(`${ORG}/authorizations`), token);

      expect(pages).toEqual([auditors.slice(0, 3), auditors.slice(3)]);
      expect([ids(all.body).length, all.body.nextCursor]).toEqual([7, null]);
      expect(ids((await get(h.url(`${ORG}/authorizations?status=revoked`), token)).body)).toEqual([made[4]!.clientId]);
      expect(ids((await get(h.url(`${ORG}/authorizations?expiresBefore=2026-12-03T00:00:00Z`), token)).body)).toEqual([made[2]!.clientId]);
      expect(
        ids((await get(h.url(`${ORG}/authorizations?lastUsedBefore=2026-11-01T00:00:00Z&recipientType=partner`), token)).body),
      ).toHaveLength(3);
    });

    test.each([
      'status=gone',
      'recipientType=cat',
      'scope=everything',
      'expiresBefore=soon',
      'recipientAccountId=rcp_1',
      'limit=501',
      'cursor=Zm9v',
    ])('when the list is asked for with %s, then 400 INVALID_PARAMETER', async (query) => {
      const answer = await get(h.url(`${ORG}/authorizations?${query}`), token);

      expect([answer.status, answer.body.code]).toEqual([400, 'INVALID_PARAMETER']);
    });

    test('when one authorization is read, then it has the created fields without apiKey', async () => {
      const created = await post(h.url(`${ORG}/authorizations`), validBody, token);
      const { apiKey: _apiKey, ...withoutKey } = created.body;

      const response = await get(h.url(`${ORG}/authorizations/${created.body.clientId}`), token);

      expect(response.status).toBe(200);
      expect(response.body).toEqual(withoutKey);
    });

    test('when the expiry has passed, then the status reads expired even before the scheduler ran', async () => {
      const created = await post(h.url(`${ORG}/authorizations`), { ...validBody, expiresAt: '2026-11-20' }, token);
      h.clock.set(new Date('2026-11-21T00:00:00.000Z'));

      const response = await get(h.url(`${ORG}/authorizations/${created.body.clientId}`), token);

      expect(response.body.status).toBe('expired');
    });

    test('when the Client ID belongs to another organization, then 404 AUTHORIZATION_NOT_FOUND as if it did not exist', async () => {
      const created = await post(h.url(`${ORG}/authorizations`), validBody, token);
      const otherToken = await adminToken('globex');

      const response = await get(h.url(`globex/authorizations/${created.body.clientId}`), otherToken);
      const unknown = await get(h.url(`globex/authorizations/rs_AAAAAAAAAAAAAAAAAAAAAAAA`), otherToken);

      expect(response.status).toBe(404);
      expect(response.body.code).toBe('AUTHORIZATION_NOT_FOUND');
      expect(unknown.status).toBe(404);
      expect(String(response.body.message).replace(created.body.clientId, 'X')).toBe(
        String(unknown.body.message).replace('rs_AAAAAAAAAAAAAAAAAAAAAAAA', 'X'),
      );
      expect((await get(h.url('globex/authorizations'), otherToken)).body).toEqual({ authorizations: [], nextCursor: null });
    });
  });

  describe('revoke', () => {
    test('when an authorization is revoked, then 200 with status revoked and one Revoked event at revision 2', async () => {
      const created = await post(h.url(`${ORG}/authorizations`), validBody, token);
      h.clock.set(new Date(NOW.getTime() + 60_000));

      const response = await post(h.url(`${ORG}/authorizations/${created.body.clientId}/revoke`), undefined, token);

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ clientId: created.body.clientId, status: 'revoked', revokedAt: '2026-11-20T10:01:00.000Z' });
      expect(response.body).not.toHaveProperty('apiKey');
      const events = await eventsIn(h.eventLog);
      expect(events.map((e) => e.type)).toEqual([EVENT_TYPES.authorizationCreated, EVENT_TYPES.authorizationRevoked]);
      expect(events[1]?.data).toEqual({
        clientId: created.body.clientId,
        organizationId: ORG,
        revokedAt: '2026-11-20T10:01:00.000Z',
        revision: 2,
        revocationReason: 'organization',
        audit: {
          action: 'authorization.revoked',
          actor: { type: 'person', id: '|admin@acme', via: 'api' },
          requestId: expect.any(String) as unknown,
          address: expect.any(String) as unknown,
        },
      });
    });

    test('when an authorization is revoked twice, then the second answers the same record and emits nothing', async () => {
      const created = await post(h.url(`${ORG}/authorizations`), validBody, token);
      const first = await post(h.url(`${ORG}/authorizations/${created.body.clientId}/revoke`), undefined, token);
      h.clock.set(new Date(NOW.getTime() + 60_000));

      const second = await post(h.url(`${ORG}/authorizations/${created.body.clientId}/revoke`), undefined, token);

      expect(second.status).toBe(200);
      expect(second.body).toEqual(first.body);
      const revoked = (await eventsIn(h.eventLog)).filter((e) => e.type === EVENT_TYPES.authorizationRevoked);
      expect(revoked).toHaveLength(1);
    });

    test('when revokes race, then exactly one Revoked event is emitted', async () => {
      const created = await post(h.url(`${ORG}/authorizations`), validBody, token);

      const responses = await Promise.all(
        Array.from({ length: 5 }, () => post(h.url(`${ORG}/authorizations/${created.body.clientId}/revoke`), undefined, token)),
      );

      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      const revoked = (await eventsIn(h.eventLog)).filter((e) => e.type === EVENT_TYPES.authorizationRevoked);
      expect(revoked).toHaveLength(1);
      expect((await h.store.find(ORG, created.body.clientId))?.revision).toBe(2);
    });

    test('when an expired authorization is revoked, then it stays expired and no event is emitted', async () => {
      const created = await post(h.url(`${ORG}/authorizations`), { ...validBody, expiresAt: '2026-11-20' }, token);
      h.clock.set(new Date('2026-11-22T00:00:00.000Z'));

      const response = await post(h.url(`${ORG}/authorizations/${created.body.clientId}/revoke`), undefined, token);

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: 'expired', revokedAt: null });
      expect(await eventsIn(h.eventLog)).toHaveLength(1);
    });

    test('when an unknown Client ID is revoked, then 404 AUTHORIZATION_NOT_FOUND', async () => {
      const response = await post(h.url(`${ORG}/authorizations/rs_AAAAAAAAAAAAAAAAAAAAAAAA/revoke`), undefined, token);

      expect(response.status).toBe(404);
      expect(response.body.code).toBe('AUTHORIZATION_NOT_FOUND');
    });

    test('when another organization revokes our Client ID, then 404 and it stays active', async () => {
      const created = await post(h.url(`${ORG}/authorizations`), validBody, token);

      const response = await post(h.url(`globex/authorizations/${created.body.clientId}/revoke`), undefined, await adminToken('globex'));

      expect(response.status).toBe(404);
      expect((await get(h.url(`${ORG}/authorizations/${created.body.clientId}`), token)).body.status).toBe('active');
    });
  });

  describe('routing', () => {
    test.each([
      ['DELETE', `${ORG}/authorizations`, 'GET, HEAD, POST'],
      ['PUT', `${ORG}/authorizations/rs_AAAAAAAAAAAAAAAAAAAAAAAA`, 'GET, HEAD'],
      ['GET', `${ORG}/authorizations/rs_AAAAAAAAAAAAAAAAAAAAAAAA/revoke`, 'POST'],
    ])('when %s is sent to a known path, then 405 with Allow', async (method, path, allow) => {
      const response = await request(h.url(path), { method, headers: { authorization: `Bearer ${token}` } });

      expect(response.status).toBe(405);
      expect(response.body.code).toBe('METHOD_NOT_ALLOWED');
      expect(response.headers.get('allow')).toBe(allow);
    });

    test('when an unknown path is requested, then a JSON 404', async () => {
      const response = await get(`${h.app.baseUrl}/v1/nothing-here`, token);

      expect(response.status).toBe(404);
      expect(response.body.code).toBe('ROUTE_NOT_FOUND');
    });

    test('when health and docs are requested, then they answer', async () => {
      const health = await get(`${h.app.baseUrl}/healthz`);
      const openapi = await get(`${h.app.baseUrl}/v1/openapi.json`);

      expect(health).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(openapi.status).toBe(200);
      expect(Object.keys(openapi.body.paths)).toEqual([
        '/organizations/{organizationId}/authorizations',
        '/organizations/{organizationId}/authorizations/{clientId}',
        '/organizations/{organizationId}/authorizations/{clientId}/revoke',
        '/organizations/{organizationId}/authorizations/{clientId}/rotate',
        '/organizations/{organizationId}/authorizations/{clientId}/access-log',
        '/organizations/{organizationId}/authorizations/{clientId}/daily-reads',
        '/organizations/{organizationId}/alerts',
        '/organizations/{organizationId}/audit-log',
        '/organizations/{organizationId}/authorizations/{clientId}/claim-link',
        '/claim/{token}',
        '/portfolio/keys/rotate',
        '/portfolio/customers/{clientId}',
        '/portfolio/offers',
        '/portfolio/offers/{clientId}/accept',
        '/portfolio/offers/{clientId}/decline',
        '/portfolio/auto-accept',
        '/secret-scanning/github',
        '/leaked-keys',
        '/organizations/{organizationId}/access-reviews',
        '/organizations/{organizationId}/access-reviews/{reviewId}',
        '/organizations/{organizationId}/access-reviews/{reviewId}/items/{clientId}',
        '/organizations/{organizationId}/access-reviews/{reviewId}/report',
        '/organizations/{organizationId}',
        '/organizations/{organizationId}/offboarding',
        '/organizations/{organizationId}/authorizations/{clientId}/erasure',
        '/portfolio/erasure',
      ]);
    });
  });
});

describe('credentials service: key rotation and allow lists (decisions 19 and 22)', () => {
  withAServicePerTest();

  const create = async (body: Record<string, unknown> = {}) =>
    (await post(h.url(`${ORG}/authorizations`), { ...validBody, ...body }, token)).body;
  const rotate = (clientId: string, body?: unknown, org = ORG) => post(h.url(`${org}/authorizations/${clientId}/rotate`), body, token);

  test('when an authorization is rotated without a body, then 200 answers the record, a new key once and the end of a one-day overlap', async () => {
    const created = await create({ expiresAt: '2027-01-01' });

    const response = await rotate(created.clientId);

    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.body).toEqual({
      ...created,
      apiKey: expect.stringMatching(/^rsk_[0-9A-Za-z]{49}$/),
      previousKeyExpiresAt: new Date(NOW.getTime() + 86_400_000).toISOString(),
    });
    expect(response.body.apiKey).not.toBe(created.apiKey);
    expect(hasValidChecksum(response.body.apiKey, 'rsk')).toBe(true);
    const stored = await h.store.find(ORG, created.clientId);
    expect(stored).toMatchObject({
      keyDigest: digestApiKey(response.body.apiKey),
      previousKeyDigest: digestApiKey(created.apiKey),
      revision: 2,
    });
    expect(await h.storedBytes()).not.toContain(response.body.apiKey);
  });

  test('when it is rotated, then a KeyRotated event with digests only reaches the log', async () => {
    const created = await create();
    const rotated = (await rotate(created.clientId, { overlapSeconds: 3600 })).body;

    const events = await eventsIn(h.eventLog);
    const rotation = events.find((event) => event.type === EVENT_TYPES.authorizationKeyRotated);

    expect(rotation?.data).toEqual({
      clientId: created.clientId,
      organizationId: ORG,
      keyDigest: digestApiKey(rotated.apiKey),
      previousKeyDigest: digestApiKey(created.apiKey),
      previousKeyExpiresAt: new Date(NOW.getTime() + 3_600_000).toISOString(),
      rotatedAt: NOW.toISOString(),
      revision: 2,
      // Decision 54: who rotated it, never a key or the token.
      audit: {
        action: 'authorization.key_rotated',
        actor: { type: 'person', id: '|admin@acme', via: 'api' },
        requestId: expect.any(String) as unknown,
        address: expect.any(String) as unknown,
      },
    });
    expect(JSON.stringify(events)).not.toContain(rotated.apiKey);
    expect(JSON.stringify(events)).not.toContain(created.apiKey);
  });

  test('when the overlap is 0, then previousKeyExpiresAt is null; when it would outlast the expiry, it ends at the expiry', async () => {
    const noOverlap = await rotate((await create()).clientId, { overlapSeconds: 0 });
    const soonOver = await create({ expiresAt: '2026-11-20T12:00:00Z' });
    const capped = await rotate(soonOver.clientId, { overlapSeconds: 604_800 });

    expect(noOverlap.body.previousKeyExpiresAt).toBeNull();
    expect(capped.body.previousKeyExpiresAt).toBe('2026-11-20T12:00:00.000Z');
  });

  test.each([
    ['a negative overlap', { overlapSeconds: -1 }],
    ['more than a week', { overlapSeconds: 604_801 }],
    ['a fraction', { overlapSeconds: 1.5 }],
    ['a string', { overlapSeconds: '3600' }],
    ['an unknown field', { overlap: 3600 }],
  ])('when the body has %s, then 400 VALIDATION_FAILED and nothing changes', async (_case, body) => {
    const created = await create();

    const response = await rotate(created.clientId, body);

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect((await h.store.find(ORG, created.clientId))?.revision).toBe(1);
  });

  test('when a revoked or expired authorization is rotated, then 409 AUTHORIZATION_INACTIVE and no event', async () => {
    const revoked = await create();
    await post(h.url(`${ORG}/authorizations/${revoked.clientId}/revoke`), undefined, token);
    const expiring = await create({ expiresAt: '2026-11-20T11:00:00Z' });
    h.clock.set(new Date('2026-11-20T11:00:00.000Z'));

    for (const clientId of [revoked.clientId, expiring.clientId]) {
      const response = await rotate(clientId);
      expect(response.status).toBe(409);
      expect(response.body).toMatchObject({ error: 'Conflict', code: 'AUTHORIZATION_INACTIVE' });
    }
    expect((await eventsIn(h.eventLog)).filter((event) => event.type === EVENT_TYPES.authorizationKeyRotated)).toEqual([]);
  });

  test("when another organization's Client ID is rotated, then 404 like an unknown one; another organization's token is 403", async () => {
    const created = await create();

    expect(
      (await post(h.url(`other-org/authorizations/${created.clientId}/rotate`), undefined, await adminToken('other-org'))).status,
    ).toBe(404);
    expect((await post(h.url(`${ORG}/authorizations/${created.clientId}/rotate`), undefined, await adminToken('other-org'))).status).toBe(
      403,
    );
  });

  test('when an allow list is given on create, then it is echoed on every record; without one the record says null', async () => {
    const listed = await create({ allowedCidrs: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'] });
    const open = await create();

    expect(listed.allowedCidrs).toEqual(['203.0.113.0/24', '2001:db8::/32', '198.51.100.7']);
    expect((await get(h.url(`${ORG}/authorizations/${listed.clientId}`), token)).body.allowedCidrs).toEqual(listed.allowedCidrs);
    expect(open.allowedCidrs).toBeNull();
    const createdEvent = (await eventsIn(h.eventLog)).find((event) => event.data.clientId === listed.clientId);
    expect(createdEvent?.data.allowedCidrs).toEqual(listed.allowedCidrs);
  });

  test.each([
    ['an empty list', [], 'allowedCidrs'],
    ['a host name', ['example.com'], 'allowedCidrs.0'],
    ['a short IPv4', ['10.1'], 'allowedCidrs.0'],
    ['a prefix too long', ['10.0.0.0/33'], 'allowedCidrs.0'],
    ['33 entries', Array.from({ length: 33 }, (_, i) => `10.0.0.${i}`), 'allowedCidrs'],
  ])('when the allow list is %s, then 400 VALIDATION_FAILED names it', async (_case, allowedCidrs, path) => {
    const response = await post(h.url(`${ORG}/authorizations`), { ...validBody, allowedCidrs }, token);

    expect(response.status).toBe(400);
    expect(pathsOf(response.body)).toContain(path);
  });
});

describe('credentials service: when the event log is down', () => {
  test('when the event log fails, then create still answers 201 and a later flush publishes the event exactly once', async () => {
    let failuresLeft = 2;
    const h = await startApi({
      wrapEventLog: (log) => ({
        append: (topic, records) => (failuresLeft-- > 0 ? Promise.reject(new Error('event log down')) : log.append(topic, records)),
        subscribe: (options) => log.subscribe(options),
        close: () => log.close(),
      }),
    });
    try {
      const created = await post(h.url(`${ORG}/authorizations`), validBody, await adminToken());
      expect(created.status).toBe(201);
      expect(await eventsIn(h.eventLog)).toEqual([]);
      expect(await h.store.pendingOutbox(10)).toHaveLength(1);

      await expect(h.relay.flush()).rejects.toThrow('event log down');
      await h.relay.flush();
      await h.relay.flush();

      const events = await eventsIn(h.eventLog);
      expect(events.map((e) => e.data.clientId)).toEqual([created.body.clientId]);
      expect(await h.store.pendingOutbox(10)).toEqual([]);
    } finally {
      await h.close();
    }
  });

  test('when the event log refuses a revocation, then it answers 202 with enforcement pending, and 200 once the event is in the log', async () => {
    const down = { now: false };
    const h = await startApi({
      wrapEventLog: (log) => ({
        append: (topic, records) => (down.now ? Promise.reject(new Error('event log down')) : log.append(topic, records)),
        subscribe: (options) => log.subscribe(options),
        close: () => log.close(),
      }),
    });
    try {
      const token = await adminToken();
      const created = await post(h.url(`${ORG}/authorizations`), validBody, token);
      down.now = true;

      const pending = await post(h.url(`${ORG}/authorizations/${created.body.clientId}/revoke`), undefined, token);
      expect(pending.status).toBe(202);
      expect(pending.body).toMatchObject({ clientId: created.body.clientId, status: 'revoked', enforcement: 'pending' });
      expect(pending.headers.get('cache-control')).toBe('no-store');
      // Recorded, and owed to the log: a retried revoke still says pending while the log is down.
      expect((await get(h.url(`${ORG}/authorizations/${created.body.clientId}`), token)).body.status).toBe('revoked');
      expect((await post(h.url(`${ORG}/authorizations/${created.body.clientId}/revoke`), undefined, token)).status).toBe(202);

      down.now = false;
      const enforced = await post(h.url(`${ORG}/authorizations/${created.body.clientId}/revoke`), undefined, token);
      expect(enforced.status).toBe(200);
      expect(enforced.body).toMatchObject({ status: 'revoked' });
      expect(enforced.body).not.toHaveProperty('enforcement');
      const events = await eventsIn(h.eventLog);
      expect(events.map((e) => e.type)).toEqual([EVENT_TYPES.authorizationCreated, EVENT_TYPES.authorizationRevoked]);
    } finally {
      await h.close();
    }
  });

  test('when the event log hangs, then the revoke answers 202 at its deadline and the event is published once the log answers', async () => {
    let release: () => void = () => undefined;
    const gate = { closed: false, opened: new Promise<void>((open) => (release = open)) };
    const h = await startApi({
      wrapEventLog: (log) => ({
        append: async (topic, records) => {
          if (gate.closed) await gate.opened;
          await log.append(topic, records);
        },
        subscribe: (options) => log.subscribe(options),
        close: () => log.close(),
      }),
      env: { EVENT_LOG_PUBLISH_DEADLINE_MS: '300' },
    });
    try {
      const token = await adminToken();
      const created = await post(h.url(`${ORG}/authorizations`), validBody, token);
      gate.closed = true;

      const started = Date.now();
      const pending = await post(h.url(`${ORG}/authorizations/${created.body.clientId}/revoke`), undefined, token);
      const took = Date.now() - started;
      expect(pending.status).toBe(202);
      expect(pending.body.enforcement).toBe('pending');
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(3000);

      release();
      await h.relay.flush();
      expect((await eventsIn(h.eventLog)).map((e) => e.type)).toEqual([EVENT_TYPES.authorizationCreated, EVENT_TYPES.authorizationRevoked]);
      expect(await h.store.pendingOutbox(10)).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
