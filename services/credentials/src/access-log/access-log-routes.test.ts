import type { AccessLogEntry, AccessRecord, DailyReadsList } from '@rsd/contracts';
import { parseCsvIndependently, parseNdjson, request, signToken } from '@rsd/testkit';
import { anAccessRecord, NOW, startCredentials, type CredentialsHarness } from '../../../../test/support/credentials-harness';

const ORG = 'acme';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A record is its access-log entry plus an id of its own and whose it is: the entry is the rest. */
const entryOf = ({ id: _id, clientId: _clientId, ...entry }: AccessRecord): AccessLogEntry => entry;
const newestFirst = (records: AccessRecord[]) =>
  [...records].sort((a, b) =>
    a.at !== b.at ? (a.at > b.at ? -1 : 1) : a.requestId !== b.requestId ? (a.requestId > b.requestId ? -1 : 1) : a.id > b.id ? -1 : 1,
  );

describe('credentials service: access log and usage (decisions 20 and 21)', () => {
  let h: CredentialsHarness;
  let token: string;
  let clientId: string;

  const path = (id = clientId, org = ORG) => `${h.app.baseUrl}/v1/organizations/${org}/authorizations/${id}`;
  const get = (url: string, bearer = token, accept = 'application/json') =>
    request(url, { headers: { authorization: `Bearer ${bearer}`, accept } });

  beforeEach(async () => {
    h = await startCredentials();
    token = await signToken({ org: ORG, scope: 'authorizations:write' });
    const created = await request(`${h.app.baseUrl}/v1/organizations/${ORG}/authorizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'] }),
    });
    clientId = created.body.clientId as string;
  });

  afterEach(() => h.close());

  describe('GET …/access-log', () => {
    test('when 1,000 entries, many sharing an instant and some a request id, are read 37 at a time, then each comes once, newest first, and the last page says there is no next', async () => {
      const records: AccessRecord[] = [];
      for (let n = 0; n < 1_000; n += 1) {
        records.push(
          anAccessRecord(clientId, Math.floor((1_000 - n) / 4) * 7 * MINUTE, n % 9 === 0 ? { requestId: 'client-chosen-id' } : {}),
        );
      }
      for (let at = 0; at < records.length; at += 250) await h.accessLog.add(records.slice(at, at + 250));

      const pages: { items: unknown[]; nextCursor: string | null }[] = [];
      for (let cursor: string | null = null; pages.length === 0 || cursor !== null;) {
        const answer = await get(`${path()}/access-log?limit=37${cursor ? `&cursor=${cursor}` : ''}`);
        expect(answer.status).toBe(200);
        pages.push(answer.body);
        cursor = answer.body.nextCursor;
      }

      expect(pages).toHaveLength(28);
      expect(pages.slice(0, -1).every((page) => page.items.length === 37)).toBe(true);
      expect(pages.at(-1)).toMatchObject({ nextCursor: null });
      expect(pages.flatMap((page) => page.items)).toEqual(newestFirst(records).map(entryOf));
    });

    test('when newer entries arrive between pages, then the next page goes on from where the last ended, without repeating or skipping', async () => {
      const older = Array.from({ length: 30 }, (_, n) => anAccessRecord(clientId, (60 - n) * MINUTE));
      await h.accessLog.add(older);

      const first = await get(`${path()}/access-log?limit=10`);
      await h.accessLog.add(Array.from({ length: 5 }, () => anAccessRecord(clientId, 0)));
      const rest = await get(`${path()}/access-log?limit=100&cursor=${first.body.nextCursor}`);

      expect([...first.body.items, ...rest.body.items]).toEqual(newestFirst(older).map(entryOf));
      expect(rest.body.nextCursor).toBeNull();
    });

    test('when no limit is given, then 100 entries come, with the documented fields only and Cache-Control no-store', async () => {
      await h.accessLog.add(
        Array.from({ length: 120 }, (_, n) =>
          anAccessRecord(clientId, (200 - n) * 1_000, { status: 401, code: 'INVALID_API_KEY', clientAddress: null }),
        ),
      );

      const answer = await get(`${path()}/access-log`);

      expect(answer.status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.body.items).toHaveLength(100);
      expect(Object.keys(answer.body.items[0]).sort()).toEqual(['at', 'clientAddress', 'code', 'requestId', 'resource', 'status']);
      expect(answer.body.items[0]).toMatchObject({ status: 401, code: 'INVALID_API_KEY', clientAddress: null });
      expect(typeof answer.body.nextCursor).toBe('string');
    });

    test('when filtered by from, to, status and address (decision 54), then only the entries every filter holds for come, paged', async () => {
      const records = Array.from({ length: 40 }, (_, n) =>
        anAccessRecord(clientId, (40 - n) * MINUTE, {
          ...(n % 4 === 0 ? { status: 403, code: 'ADDRESS_NOT_ALLOWED' } : {}),
          clientAddress: n % 2 === 0 ? '203.0.113.7' : '198.51.100.7',
        }),
      );
      await h.accessLog.add(records);
      const from = records[8]!.at;
      const to = records[36]!.at;
      const wanted = records.filter((record, n) => n >= 8 && n < 36 && n % 4 === 0);

      const first = await get(`${path()}/access-log?status=4xx&address=203.0.113.7&from=${from}&to=${to}&limit=4`);
      const rest = await get(`${path()}/access-log?status=403&address=203.0.113.7&from=${from}&to=${to}&cursor=${first.body.nextCursor}`);

      expect([...first.body.items, ...rest.body.items]).toEqual(newestFirst(wanted).map(entryOf));
      expect(rest.body.nextCursor).toBeNull();
    });

    test('when the access log is asked for as CSV and as NDJSON, then every filtered entry is there, as an independent parser reads it', async () => {
      const records = Array.from({ length: 1_100 }, (_, n) =>
        anAccessRecord(clientId, (1_100 - n) * 1_000, n % 2 === 0 ? { status: 429, code: 'RATE_LIMITED' } : {}),
      );
      for (let at = 0; at < records.length; at += 275) await h.accessLog.add(records.slice(at, at + 275));
      const refused = newestFirst(records.filter((record) => record.status === 429));

      const csv = await get(`${path()}/access-log?status=429`, token, 'text/csv');
      const ndjson = await fetch(`${path()}/access-log?status=429`, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/x-ndjson' },
      });

      const rows = parseCsvIndependently(csv.body as string);
      expect(rows[0]).toEqual(['at', 'resource', 'status', 'code', 'clientAddress', 'requestId']);
      expect(rows.slice(1)).toEqual(refused.map((r) => [r.at, r.resource, '429', 'RATE_LIMITED', r.clientAddress ?? '', r.requestId]));
      expect(parseNdjson(await ndjson.text())).toEqual(refused.map(entryOf));
    });

    test.each([
      ['?status=4x', 'status'],
      ['?status=600', 'status'],
      ['?address=not%20an%20address', 'address'],
      ['?resource=everything', 'resource'],
      ['?resource=certificate&resource=score', 'resource'],
      ['?from=2026-11-20', 'from'],
      ['?from=2026-11-20T00:00:00Z&to=2026-11-20T00:00:00Z', 'from must be before to'],
    ])('when the filter is %s, then 400 INVALID_PARAMETER names %s', async (query, named) => {
      const answer = await get(`${path()}/access-log${query}`);

      expect([answer.status, answer.body.code]).toEqual([400, 'INVALID_PARAMETER']);
      expect(answer.body.message).toContain(named);
    });

    test('when nobody has read yet, then the page is empty', async () => {
      expect((await get(`${path()}/access-log`)).body).toEqual({ items: [], nextCursor: null });
    });

    test.each([
      ['limit=0'],
      ['limit=501'],
      ['limit='],
      ['limit=abc'],
      ['limit=1.5'],
      ['limit=-3'],
      ['limit=07'],
      ['limit=10&limit=20'],
      ['cursor=not-a-cursor'],
      ['cursor='],
      [`cursor=${Buffer.from('v2|2026-11-20T10:00:00.000Z|r|i').toString('base64url')}`],
      [`cursor=${Buffer.from('v1|yesterday|r|i').toString('base64url')}`],
      [`cursor=${Buffer.from('v1|2026-11-20T10:00:00.000Z|r|i').toString('base64url')}=`],
      ['cursor=a&cursor=b'],
    ])('when the query is %s, then 400 INVALID_PARAMETER', async (query) => {
      const answer = await get(`${path()}/access-log?${query}`);

      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('INVALID_PARAMETER');
    });

    test('when the caller may not see the authorization, then the same answers as for reading it', async () => {
      const other = await signToken({ org: 'someone-else', scope: 'authorizations:write' });

      expect((await get(`${path('rs_UNKNOWNUNKNOWNUNKNOWN00')}/access-log`)).body.code).toBe('AUTHORIZATION_NOT_FOUND');
      expect((await get(`${path(clientId, 'someone-else')}/access-log`, other)).body.code).toBe('AUTHORIZATION_NOT_FOUND');
      expect((await get(`${path()}/access-log`, other)).body.code).toBe('FORBIDDEN_ORGANIZATION');
      expect((await request(`${path()}/access-log`)).status).toBe(401);
      expect(
        (await request(`${path()}/access-log`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).headers.get('allow'),
      ).toBe('GET, HEAD');
    });
  });

  describe('usage on every answer', () => {
    test('when reads succeeded and failed over the last 40 days, then get, list, revoke and rotate all carry the same lastUsedAt and the successful reads of each window', async () => {
      await h.accessLog.add([
        anAccessRecord(clientId, 40 * DAY),
        anAccessRecord(clientId, 10 * DAY, { status: 304 }),
        anAccessRecord(clientId, 2 * DAY),
        anAccessRecord(clientId, 5 * HOUR, { status: 403, code: 'ADDRESS_NOT_ALLOWED' }),
        anAccessRecord(clientId, 3 * HOUR, { resource: 'pillars' }),
        anAccessRecord(clientId, 2 * HOUR, { status: 304 }),
        anAccessRecord(clientId, 30 * MINUTE, { status: 429, code: 'RATE_LIMITED' }),
        anAccessRecord(clientId, 2 * MINUTE, { resource: 'history' }),
        anAccessRecord(clientId, MINUTE, { status: 401, code: 'INVALID_API_KEY' }),
      ]);
      const expected = { lastUsedAt: new Date(NOW.getTime() - 2 * MINUTE).toISOString(), usage: { last24h: 3, last30d: 5 } };

      const got = await get(path());
      const listed = await get(`${h.app.baseUrl}/v1/organizations/${ORG}/authorizations`);
      const rotated = await request(`${path()}/rotate`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
      const revoked = await request(`${path()}/revoke`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });

      expect(got.body).toMatchObject(expected);
      expect(listed.body.authorizations[0]).toMatchObject({ clientId, ...expected });
      expect(rotated.body).toMatchObject(expected);
      expect(revoked.body).toMatchObject({ status: 'revoked', ...expected });
    });

    test('when an authorization was never used, then lastUsedAt is null and both counts are 0, in the list too', async () => {
      const listed = await get(`${h.app.baseUrl}/v1/organizations/${ORG}/authorizations`);

      expect(listed.body.authorizations).toEqual([
        expect.objectContaining({ clientId, lastUsedAt: null, usage: { last24h: 0, last30d: 0 } }),
      ]);
    });
  });

  describe('what the console reads through the API (decision 51)', () => {
    test('when reads and refusals fell on some days, then daily-reads lists the last 30 UTC days oldest first with both counts, today included', async () => {
      await h.accessLog.add([
        anAccessRecord(clientId, 0),
        anAccessRecord(clientId, MINUTE, { status: 401, code: 'INVALID_API_KEY' }),
        anAccessRecord(clientId, 3 * DAY),
        anAccessRecord(clientId, 40 * DAY),
      ]);

      const { status, body } = await get(`${path()}/daily-reads`);
      const days = (body as DailyReadsList).days;

      expect(status).toBe(200);
      expect(days).toHaveLength(30);
      expect(days.at(-1)).toEqual({ day: NOW.toISOString().slice(0, 10), reads: 1, refusals: 1 });
      expect(days.at(-4)).toEqual({ day: new Date(NOW.getTime() - 3 * DAY).toISOString().slice(0, 10), reads: 1, refusals: 0 });
      expect(days.reduce((sum, day) => sum + day.reads, 0)).toBe(2);
    });

    test("when another organization's grant or token is used, then daily-reads and alerts answer as for any grant of another", async () => {
      const other = await signToken({ org: 'globex', scope: 'authorizations:write' });

      expect((await get(`${path(clientId, 'globex')}/daily-reads`, other)).status).toBe(404);
      expect((await get(`${path()}/daily-reads`, other)).status).toBe(403);
      expect((await get(`${h.app.baseUrl}/v1/organizations/${ORG}/alerts`, other)).status).toBe(403);
      expect(await get(`${h.app.baseUrl}/v1/organizations/${ORG}/alerts`)).toMatchObject({ status: 200, body: { alerts: [] } });
    });
  });
});
