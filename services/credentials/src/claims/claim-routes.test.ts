import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { authorizationKeyClaimedSchema, EVENT_TYPES, TOPICS } from '@rsd/contracts';
import { digestApiKey, hasValidChecksum } from '@rsd/domain';
import { UnavailableError } from '@rsd/platform';
import { capturedLog, request, signToken, valuesOn, type CapturedLog } from '@rsd/testkit';
import { NOW, startCredentials, type CredentialsHarness } from '../../../../test/support/credentials-harness';

const ORG = 'acme';
let h: CredentialsHarness;
let token: string;
let logs: CapturedLog;

beforeEach(async () => {
  logs = capturedLog('credentials', 'debug');
  h = await startCredentials({ env: { FAILED_AUTH_LIMIT_PER_MINUTE: '5' }, log: logs.log });
  token = await signToken({ org: ORG, scope: 'authorizations:write', sub: 'admin@acme' });
});
afterEach(async () => {
  await h.close();
});

const api = (path: string) => `${h.app.baseUrl}/v1/organizations/${ORG}/authorizations${path}`;
const json = { 'content-type': 'application/json', accept: 'application/json' };

async function createWithLink(body: Record<string, unknown> = {}) {
  const created = await request(api(''), {
    method: 'POST',
    headers: { ...json, authorization: `Bearer ${token}` },
    body: JSON.stringify({
      recipientType: 'auditor',
      recipientName: 'Example Audit',
      scopes: ['qr_score'],
      keyDelivery: 'claimLink',
      ...body,
    }),
  });
  return created;
}

const describe_ = (url: string) => request(url, { headers: { accept: 'application/json' } });
const claim = (url: string) => request(url, { method: 'POST', headers: json, body: '{}' });

describe('claim links (decision 38), at the service with a clock the test holds', () => {
  test('when an authorization is created with a claim link, then the 201 has no key, the link, and the record says unclaimed', async () => {
    const created = await createWithLink({ claimValidSeconds: 3600 });

    expect(created.status).toBe(201);
    expect(created.body).not.toHaveProperty('apiKey');
    expect(created.body).toMatchObject({ keyClaimed: false, claimedAt: null, claimedFromAddress: null });
    expect(created.body.claim).toEqual({
      url: expect.stringMatching(new RegExp(`^${h.app.baseUrl}/claim/[A-Za-z0-9_-]{43}$`)),
      expiresAt: '2026-11-20T11:00:00.000Z',
    });
  });

  test.each([[3599], [604_801], [1.5], ['3600']])(
    'when claimValidSeconds is %p, then the create is refused as VALIDATION_FAILED',
    async (seconds) => {
      const created = await createWithLink({ claimValidSeconds: seconds });

      expect(created.status).toBe(400);
      expect(created.body).toMatchObject({ code: 'VALIDATION_FAILED', details: [expect.objectContaining({ path: 'claimValidSeconds' })] });
    },
  );

  test('when the link is opened twice then claimed, then nothing was consumed by the opening, the key is shown once and its digest is in the event', async () => {
    const { url } = (await createWithLink()).body.claim as { url: string };

    const first = await describe_(url);
    const second = await describe_(url);
    const claimed = await claim(url);
    const again = await claim(url);

    expect(first.body).toEqual(second.body);
    expect(first.body).toMatchObject({
      organizationId: ORG,
      recipientName: 'Example Audit',
      recipientType: 'auditor',
      scopes: ['qr_score'],
    });
    expect(claimed.status).toBe(201);
    expect(hasValidChecksum(claimed.body.apiKey as string, 'rsk')).toBe(true);
    expect(again).toMatchObject({ status: 410, body: { code: 'CLAIM_LINK_USED' } });
    expect((await describe_(url)).body).toMatchObject({ code: 'CLAIM_LINK_USED' });
    const events = (await valuesOn(h.eventLog, TOPICS.authorizations)).map((value) => JSON.parse(value) as { type: string });
    const claimedEvent = authorizationKeyClaimedSchema.parse(events.find((event) => event.type === EVENT_TYPES.authorizationKeyClaimed));
    expect(claimedEvent.data.keyDigest).toBe(digestApiKey(claimed.body.apiKey as string));
    const record = await request(api(`/${claimed.body.clientId as string}`), { headers: { authorization: `Bearer ${token}` } });
    expect(record.body).toMatchObject({ keyClaimed: true, claimedAt: NOW.toISOString(), claimedFromAddress: '127.0.0.1' });
  });

  test('when a claim body is not a ClaimRequest object, then it is 400 VALIDATION_FAILED and the link still claims', async () => {
    const { url } = (await createWithLink()).body.claim as { url: string };

    for (const body of ['null', '[]', '"account"', '{"into":"portfolio"}', '{"accountName":"x","extra":1}']) {
      expect(await request(url, { method: 'POST', headers: json, body })).toMatchObject({
        status: 400,
        body: { code: 'VALIDATION_FAILED' },
      });
    }

    expect((await claim(url)).status).toBe(201);
  });

  test('when a link is claimed into a new account, then the account key is shown once, the JoinedAccount event names the account and carries no key', async () => {
    const { url } = (await createWithLink()).body.claim as { url: string };

    const joined = await request(url, { method: 'POST', headers: json, body: JSON.stringify({ into: 'account', accountName: 'Book' }) });

    expect(joined).toMatchObject({ status: 201, body: { accountId: expect.stringMatching(/^rcp_/), clientId: expect.any(String) } });
    expect(hasValidChecksum(joined.body.accountKey as string, 'rsa')).toBe(true);
    const values = await valuesOn(h.eventLog, TOPICS.authorizations);
    const events = values.map((value) => JSON.parse(value) as { type: string; data: Record<string, unknown> });
    expect(events.find((event) => event.type === EVENT_TYPES.authorizationJoinedAccount)?.data).toMatchObject({
      recipientAccountId: joined.body.accountId,
      clientId: joined.body.clientId,
    });
    expect(events.find((event) => event.type === EVENT_TYPES.recipientAccountCreated)?.data).toMatchObject({
      accountId: joined.body.accountId,
      name: 'Book',
      keyDigest: digestApiKey(joined.body.accountKey as string),
    });
    expect(values.some((value) => value.includes(joined.body.accountKey as string))).toBe(false);
    expect(await claim(url)).toMatchObject({ status: 410, body: { code: 'CLAIM_LINK_USED' } });
  });

  test('when a link is claimed into an account with its previous key of an overlap, then 403 KEY_READ_ONLY and the link still claims with the current key', async () => {
    const first = (await createWithLink()).body.claim as { url: string };
    const opened = await request(first.url, { method: 'POST', headers: json, body: JSON.stringify({ into: 'account' }) });
    const previousKey = opened.body.accountKey as string;
    const rotated = await request(`${h.app.baseUrl}/v1/portfolio/keys/rotate`, {
      method: 'POST',
      headers: { ...json, 'x-api-key': previousKey },
      body: '{}',
    });
    expect(rotated.status).toBe(201);
    const { url } = (await createWithLink()).body.claim as { url: string };
    const into = (key: string) =>
      request(url, { method: 'POST', headers: { ...json, 'x-api-key': key }, body: JSON.stringify({ into: 'account' }) });

    expect(await into(previousKey)).toMatchObject({ status: 403, body: { code: 'KEY_READ_ONLY' } });
    expect(await into(rotated.body.accountKey as string)).toMatchObject({ status: 201, body: { accountId: opened.body.accountId } });
  });

  test('when the link is used after its claimValidSeconds, then it answers 410 CLAIM_LINK_EXPIRED and makes no key', async () => {
    const { url } = (await createWithLink({ claimValidSeconds: 3600 })).body.claim as { url: string };

    h.clock.set(new Date(NOW.getTime() + 3600_000));

    expect(await describe_(url)).toMatchObject({ status: 410, body: { code: 'CLAIM_LINK_EXPIRED' } });
    expect(await claim(url)).toMatchObject({ status: 410, body: { code: 'CLAIM_LINK_EXPIRED' } });
  });

  test('when a new link is issued, then the old one is unknown and the new one claims; once claimed, no new link is issued', async () => {
    const created = await createWithLink();
    const clientId = created.body.clientId as string;
    const old = (created.body.claim as { url: string }).url;

    const reissued = await request(api(`/${clientId}/claim-link`), { method: 'POST', headers: { authorization: `Bearer ${token}` } });

    expect(reissued.status).toBe(200);
    expect(reissued.body).toMatchObject({ clientId, keyClaimed: false, claim: { url: expect.any(String) } });
    expect(await claim(old)).toMatchObject({ status: 404, body: { code: 'CLAIM_LINK_NOT_FOUND' } });
    expect((await claim((reissued.body.claim as { url: string }).url)).status).toBe(201);
    const refused = await request(api(`/${clientId}/claim-link`), { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(refused).toMatchObject({ status: 409, body: { code: 'KEY_ALREADY_CLAIMED' } });
  });

  test('when the authorization is revoked, then its link answers 410 CLAIM_LINK_EXPIRED and no new link is issued', async () => {
    const created = await createWithLink();
    const clientId = created.body.clientId as string;

    await request(api(`/${clientId}/revoke`), { method: 'POST', headers: { authorization: `Bearer ${token}` } });

    expect(await claim((created.body.claim as { url: string }).url)).toMatchObject({ status: 410, body: { code: 'CLAIM_LINK_EXPIRED' } });
    const refused = await request(api(`/${clientId}/claim-link`), { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(refused).toMatchObject({ status: 409, body: { code: 'AUTHORIZATION_INACTIVE' } });
  });

  test('when an unclaimed key is rotated, then it is refused with KEY_NOT_CLAIMED: the organization never gets the key', async () => {
    const clientId = (await createWithLink()).body.clientId as string;

    const rotated = await request(api(`/${clientId}/rotate`), { method: 'POST', headers: { authorization: `Bearer ${token}` } });

    expect(rotated).toMatchObject({ status: 409, body: { code: 'KEY_NOT_CLAIMED' } });
  });

  test('when unknown links are tried again and again from one address, then it is limited like failed authentications', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) statuses.push((await claim(`${h.app.baseUrl}/claim/${'A'.repeat(43)}`)).status);

    expect(statuses).toEqual([404, 404, 404, 404, 404, 429, 429]);
  });

  test('when a claim is made and refused, then the access log lists both, and neither counts as a read', async () => {
    const created = await createWithLink();
    const url = (created.body.claim as { url: string }).url;
    await claim(url);
    h.clock.set(new Date(NOW.getTime() + 1000));
    await claim(url);

    const log = await request(api(`/${created.body.clientId as string}/access-log`), { headers: { authorization: `Bearer ${token}` } });

    expect(log.body.items).toEqual([
      expect.objectContaining({ resource: 'claim', status: 410, code: 'CLAIM_LINK_USED', clientAddress: '127.0.0.1' }),
      expect.objectContaining({ resource: 'claim', status: 201, code: null, clientAddress: '127.0.0.1' }),
    ]);
    const record = await request(api(`/${created.body.clientId as string}`), { headers: { authorization: `Bearer ${token}` } });
    expect(record.body).toMatchObject({ lastUsedAt: null, usage: { last24h: 0, last30d: 0 } });
  });

  test('when claims are made, then neither the token nor the key is in any log line or stored byte', async () => {
    const { url } = (await createWithLink()).body.claim as { url: string };
    const rawToken = url.split('/').pop() ?? '';
    await describe_(url);
    const { apiKey } = (await claim(url)).body as { apiKey: string };
    await claim(url);
    await request(`${url}x`, { headers: { accept: 'application/json' } });

    expect(logs.lines.join('\n')).toContain('/claim/[redacted]');
    const files = (await readdir(h.dir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
    const stored = (await Promise.all(files.map((entry) => readFile(join(entry.parentPath, entry.name), 'latin1')))).join('\n');
    const events = (await valuesOn(h.eventLog, TOPICS.authorizations)).join('\n');
    for (const secret of [rawToken, apiKey]) {
      expect(stored).not.toContain(secret);
      expect(events).not.toContain(secret);
      expect(logs.lines.join('\n')).not.toContain(secret);
    }
  });

  test.each([
    ['a body that is not JSON', { 'content-type': 'application/json' }, '{', 400, 'MALFORMED_JSON'],
    [
      'a form (the console page reads forms, the API JSON alone)',
      { 'content-type': 'application/x-www-form-urlencoded' },
      'a=1',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['JSON in a charset it cannot read', { 'content-type': 'application/json; charset=latin9' }, '{}', 415, 'UNSUPPORTED_MEDIA_TYPE'],
  ])('when a claim carries %s, then it is refused as the client error it is, never a 500', async (_name, headers, body, status, code) => {
    const { url } = (await createWithLink()).body.claim as { url: string };

    const answer = await request(url, { method: 'POST', headers, body });

    expect(answer).toMatchObject({ status, body: { code } });
    expect(logs.lines.join('\n')).not.toContain(url.split('/').pop());
  });

  test('when a store is out of reach, then the JSON is the documented 503 with Retry-After; no log line has the token', async () => {
    let down = false;
    const outage = await startCredentials({
      log: logs.log,
      wrapStore: (store) => ({
        ...store,
        findByClaimToken: (digest) => (down ? Promise.reject(new UnavailableError('mongo')) : store.findByClaimToken(digest)),
      }),
    });
    try {
      const created = await request(`${outage.app.baseUrl}/v1/organizations/${ORG}/authorizations`, {
        method: 'POST',
        headers: { ...json, authorization: `Bearer ${token}` },
        body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], keyDelivery: 'claimLink' }),
      });
      const { url } = created.body.claim as { url: string };
      down = true;

      const program = await describe_(url);

      expect(program).toMatchObject({ status: 503, body: { code: 'SERVICE_UNAVAILABLE' } });
      expect(program.headers.get('retry-after')).toBe('5');
      expect(logs.lines.join('\n')).toContain('dependency unreachable');
      expect(logs.lines.join('\n')).not.toContain(url.split('/').pop());
    } finally {
      await outage.close();
    }
  });

  test('when the token is not percent-encoded UTF-8, then it is 400 VALIDATION_FAILED (decision 50)', async () => {
    expect(await describe_(`${h.app.baseUrl}/claim/%FF`)).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
  });
});
