import { createHash } from 'node:crypto';
import { ACCOUNT_KEY_PREFIX, EVENT_TYPES, TOPICS } from '@rsd/contracts';
import { digestApiKey, generateApiKey } from '@rsd/domain';
import {
  capturedLog,
  request,
  signToken,
  startSecretScanningProvider,
  valuesOn,
  type CapturedLog,
  type JsonResponse,
  type SecretScanningProvider,
} from '@rsd/testkit';
import { NOW, startCredentials, type CredentialsHarness } from '../../../../test/support/credentials-harness';

const ORG = 'acme';
let h: CredentialsHarness;
let provider: SecretScanningProvider;
let token: string;
let logs: CapturedLog;
/** Every raw key the tests made or reported: none may reach the log or the event log. */
const secrets: string[] = [];

beforeEach(async () => {
  provider = await startSecretScanningProvider();
  logs = capturedLog('credentials', 'debug');
  h = await startCredentials({
    env: { FAILED_AUTH_LIMIT_PER_MINUTE: '5', SECRET_SCANNING_KEYS_URL: provider.keysUrl },
    log: logs.log,
  });
  token = await signToken({ org: ORG, scope: 'authorizations:write', sub: 'admin@acme' });
});
afterEach(async () => {
  const haystack = [...logs.lines, ...(await valuesOn(h.eventLog, TOPICS.authorizations))].join('\n');
  expect(secrets.filter((secret) => haystack.includes(secret))).toEqual([]);
  await h.close();
  await provider.close();
});

const json = { 'content-type': 'application/json', accept: 'application/json' };
const admin = () => ({ ...json, authorization: `Bearer ${token}` });
const authorizations = (path = '') => `${h.app.baseUrl}/v1/organizations/${ORG}/authorizations${path}`;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

async function aGrant(): Promise<{ clientId: string; apiKey: string }> {
  const created = await request(authorizations(), {
    method: 'POST',
    headers: admin(),
    body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'] }),
  });
  expect(created.status).toBe(201);
  secrets.push(created.body.apiKey);
  return created.body;
}

async function rotate(clientId: string): Promise<string> {
  const rotated = await request(authorizations(`/${clientId}/rotate`), {
    method: 'POST',
    headers: admin(),
    body: '{"overlapSeconds": 3600}',
  });
  expect(rotated.status).toBe(200);
  secrets.push(rotated.body.apiKey);
  return rotated.body.apiKey;
}

async function anAccount(): Promise<{ accountId: string; accountKey: string }> {
  const created = await request(authorizations(), {
    method: 'POST',
    headers: admin(),
    body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], keyDelivery: 'claimLink' }),
  });
  const claimed = await request(created.body.claim.url, { method: 'POST', headers: json, body: '{"into": "account"}' });
  expect(claimed.status).toBe(201);
  secrets.push(claimed.body.accountKey);
  return claimed.body;
}

const grant = async (clientId: string) => (await request(authorizations(`/${clientId}`), { headers: admin() })).body;

function report(tokens: string[], type = 'resilience_score_api_key'): string {
  secrets.push(...tokens.filter((reported) => reported.length > 20));
  return JSON.stringify(
    tokens.map((reported) => ({ token: reported, type, url: 'https://github.com/octo/repo/blob/main/.env', source: 'content' })),
  );
}

function post(body: string, headers: Record<string, string> = {}) {
  return request(`${h.app.baseUrl}/v1/secret-scanning/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'github-public-key-identifier': provider.keyIdentifier,
      'github-public-key-signature': provider.sign(body),
      ...headers,
    },
    body,
  });
}

const labelsOf = (answer: JsonResponse) => (answer.body as { label: string }[]).map((entry) => entry.label);

const events = async () =>
  (await valuesOn(h.eventLog, TOPICS.authorizations)).map((value) => JSON.parse(value) as { type: string; data: Record<string, unknown> });

describe('GitHub secret-scanning reports (decision 43), at the service', () => {
  test('when a signed report names a live key, a previous key in its overlap, an account key, an unknown key and a stray string, then each is labelled and only the live keys end', async () => {
    const live = await aGrant();
    const rotated = await aGrant();
    const oldKey = rotated.apiKey;
    await rotate(rotated.clientId);
    const account = await anAccount();
    const unknown = generateApiKey('rsk');
    const body = report([live.apiKey, oldKey, account.accountKey, unknown, 'not-a-key-at-all']);

    const answer = await post(body);

    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual(
      [live.apiKey, oldKey, account.accountKey, unknown, 'not-a-key-at-all'].map((reported, index) => ({
        token_hash: sha256(reported),
        token_type: 'resilience_score_api_key',
        label: index < 3 ? 'true_positive' : 'false_positive',
      })),
    );
    expect(await grant(live.clientId)).toMatchObject({ status: 'revoked', revocationReason: 'key_leaked', revokedAt: NOW.toISOString() });
    expect(await grant(rotated.clientId)).toMatchObject({ status: 'active', revocationReason: null });
    expect(await h.store.findByClientId(rotated.clientId)).toMatchObject({
      previousKeyDigest: null,
      leakedKeyDigest: digestApiKey(oldKey),
    });
    expect(await h.store.findAccount(account.accountId)).toMatchObject({
      keyDigest: null,
      leakedKeyDigest: digestApiKey(account.accountKey),
    });
    const published = await events();
    expect(published.filter((event) => event.type === EVENT_TYPES.authorizationRevoked).map((event) => event.data)).toEqual([
      expect.objectContaining({ clientId: live.clientId, revocationReason: 'key_leaked' }),
    ]);
    expect(published.filter((event) => event.type === EVENT_TYPES.authorizationPreviousKeyRevoked).map((event) => event.data)).toEqual([
      expect.objectContaining({ clientId: rotated.clientId, previousKeyDigest: digestApiKey(oldKey) }),
    ]);
    expect(published.filter((event) => event.type === EVENT_TYPES.recipientAccountKeyRevoked).map((event) => event.data)).toEqual([
      expect.objectContaining({ accountId: account.accountId, keyDigest: digestApiKey(account.accountKey) }),
    ]);
    // Nothing waits in the outbox: the 200 came once the events were in the event log.
    expect(await h.store.pendingOutbox(100)).toEqual([]);

    const again = await post(body);

    expect(again).toMatchObject({ status: 200, body: answer.body });
    expect(await events()).toHaveLength(published.length);
  });

  test('when a report names the same key twice, then both are labelled true_positive and it ends once', async () => {
    const live = await aGrant();

    const answer = await post(report([live.apiKey, live.apiKey]));

    expect(labelsOf(answer)).toEqual(['true_positive', 'true_positive']);
    expect((await events()).filter((event) => event.type === EVENT_TYPES.authorizationRevoked)).toHaveLength(1);
  });

  test('when a key was revoked by its organization or its overlap is over, then it is a false positive and nothing changes', async () => {
    const revoked = await aGrant();
    await request(authorizations(`/${revoked.clientId}/revoke`), { method: 'POST', headers: admin() });
    const rotated = await aGrant();
    await rotate(rotated.clientId);
    h.clock.set(new Date(NOW.getTime() + 3601_000));
    const before = (await events()).length;

    const answer = await post(report([revoked.apiKey, rotated.apiKey]));

    expect(labelsOf(answer)).toEqual(['false_positive', 'false_positive']);
    expect(await grant(revoked.clientId)).toMatchObject({ revocationReason: 'organization' });
    expect(await events()).toHaveLength(before);
  });

  test('when an account key of the right prefix but a wrong checksum is reported, then it is a false positive without a lookup', async () => {
    const account = await anAccount();
    const typo = `${account.accountKey.slice(0, -1)}${account.accountKey.endsWith('A') ? 'B' : 'A'}`;

    const answer = await post(report([typo]));

    expect(answer.body[0].label).toBe('false_positive');
    expect(await h.store.findAccount(account.accountId)).toMatchObject({ keyDigest: digestApiKey(account.accountKey) });
    expect(typo.startsWith(`${ACCOUNT_KEY_PREFIX}_`)).toBe(true);
  });

  test('when the signature is missing, does not verify, is not base64 DER, or names a key the endpoint does not list, then 401 and nothing changes', async () => {
    const live = await aGrant();
    const body = report([live.apiKey]);
    const stranger = provider.newKey();
    const refusals = [
      await request(`${h.app.baseUrl}/v1/secret-scanning/github`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      }),
      await post(body, { 'github-public-key-signature': provider.sign(`${body} `) }),
      await post(body, { 'github-public-key-signature': 'bm90IGEgc2lnbmF0dXJl' }),
      await post(body, {
        'github-public-key-identifier': stranger.identifier,
        'github-public-key-signature': provider.sign(body, stranger),
      }),
      await post(body, { 'github-public-key-identifier': '' }),
    ];

    for (const refusal of refusals) {
      expect(refusal).toMatchObject({ status: 401, body: { code: 'INVALID_SIGNATURE' } });
    }
    expect(await grant(live.clientId)).toMatchObject({ status: 'active' });
    expect((await events()).filter((event) => event.type === EVENT_TYPES.authorizationRevoked)).toEqual([]);
  });

  test('when a report names an unknown key identifier, then the list is fetched again once, and not again within a minute; a key listed since is then found', async () => {
    const live = await aGrant();
    const body = report([live.apiKey]);
    expect((await post(body)).status).toBe(200);
    expect(provider.fetches()).toBe(1);
    const added = provider.newKey();
    provider.list(added);
    const signedByAdded = { 'github-public-key-identifier': added.identifier, 'github-public-key-signature': provider.sign(body, added) };

    // The list was fetched a moment ago: the new identifier is unknown, and no caller makes it fetched again.
    expect((await post(body, signedByAdded)).status).toBe(401);
    expect((await post(body, signedByAdded)).status).toBe(401);
    expect(provider.fetches()).toBe(1);

    h.clock.set(new Date(NOW.getTime() + 60_000));
    expect(await post(body, signedByAdded)).toMatchObject({ status: 200, body: [{ label: 'true_positive' }] });
    expect(provider.fetches()).toBe(2);
  });

  test('when the key endpoint cannot be reached, then 503 with Retry-After and nothing changes', async () => {
    const live = await aGrant();
    await provider.close();

    const answer = await post(report([live.apiKey]));

    expect(answer).toMatchObject({ status: 503, body: { code: 'SERVICE_UNAVAILABLE' } });
    expect(answer.headers.get('retry-after')).not.toBeNull();
    expect(await grant(live.clientId)).toMatchObject({ status: 'active' });
    provider = await startSecretScanningProvider();
  });

  test.each([
    ['not JSON', '[{"token": ', 400, 'MALFORMED_JSON'],
    ['an object, not an array', '{"token": "x", "type": "t"}', 400, 'VALIDATION_FAILED'],
    ['an entry without a token', '[{"type": "t"}]', 400, 'VALIDATION_FAILED'],
    ['a token that is not a string', '[{"token": 5, "type": "t"}]', 400, 'VALIDATION_FAILED'],
    ['more than 1,000 tokens', JSON.stringify(Array.from({ length: 1001 }, () => ({ token: 'x', type: 't' }))), 413, 'PAYLOAD_TOO_LARGE'],
  ])('when the signed body is %s, then it is refused whole', async (_name, body, status, code) => {
    const answer = await post(body);

    expect(answer).toMatchObject({ status, body: { code } });
  });

  test('when the body is not JSON by its type, then 415', async () => {
    const body = report([generateApiKey('rsk')]);

    expect(await post(body, { 'content-type': 'text/plain' })).toMatchObject({ status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
  });

  test('when an empty report is signed, then it is answered with no labels', async () => {
    expect(await post('[]')).toMatchObject({ status: 200, body: [] });
  });
});

describe('POST /leaked-keys (decision 43), at the service', () => {
  const leaked = (body: unknown) =>
    request(`${h.app.baseUrl}/v1/leaked-keys`, {
      method: 'POST',
      headers: json,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  test('when a live key is reported, then 202 and it ends; an unknown key or a stray string gets the same 202', async () => {
    const live = await aGrant();
    const unknown = generateApiKey('rsk');
    secrets.push(unknown);

    const answers = [await leaked({ key: live.apiKey }), await leaked({ key: unknown }), await leaked({ key: 'whatever' })];

    for (const answer of answers) expect(answer).toMatchObject({ status: 202, body: '' });
    expect(await grant(live.clientId)).toMatchObject({ status: 'revoked', revocationReason: 'key_leaked' });
  });

  test.each([
    ['not JSON', '{', 'MALFORMED_JSON'],
    ['no key', {}, 'VALIDATION_FAILED'],
    ['a key that is not a string', { key: 7 }, 'VALIDATION_FAILED'],
    ['another field', { key: 'rsk_x', note: 'found it' }, 'VALIDATION_FAILED'],
    ['a key longer than any key, however escaped', { key: '\u00e9'.repeat(1025) }, 'VALIDATION_FAILED'],
  ])('when the body has %s, then 400', async (_name, body, code) => {
    expect(await leaked(body)).toMatchObject({ status: 400, body: { code } });
  });

  test('when an address reports more keys than its failed-authentication budget, then 429 and the key is not looked at', async () => {
    for (let i = 0; i < 5; i += 1) expect((await leaked({ key: generateApiKey('rsk') })).status).toBe(202);
    const live = await aGrant();

    const limited = await leaked({ key: live.apiKey });

    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).not.toBeNull();
    expect(await grant(live.clientId)).toMatchObject({ status: 'active' });
  });
});
