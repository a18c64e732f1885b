import { READ_VIEWS } from '@rsd/domain';
import { type ViewStore } from '@rsd/ports';
import { projectEvent } from '@rsd/consumers';
import { request } from '@rsd/testkit';
import {
  authorizationRevokedEvent,
  issueCredential,
  recordScore,
  revokeCredential,
  rotateCredential,
  testClock,
  type IssuedCredential,
} from '../testing/read-api-fixtures';
import { startReadApi, type RunningReadApi } from '../testing/read-api-harness';

describe('read API: rotated keys and allow lists (decisions 19 and 22)', () => {
  let running: RunningReadApi;
  let views: ViewStore;
  const clock = testClock('2026-11-21T08:00:00.000Z');

  beforeEach(async () => {
    clock.set('2026-11-21T08:00:00.000Z');
    // One trusted proxy hop, so each test can say which client address the request came from.
    running = await startReadApi({ env: { TRUST_PROXY_HOPS: '1', RATE_LIMIT_PER_MINUTE: '2' }, clock });
    views = running.views;
    await recordScore(views, { organizationId: 'acme' });
  });

  afterEach(() => running.close());

  const read = (credential: IssuedCredential, from = '198.51.100.7', resource = 'score') =>
    request(`${running.baseUrl}/v1/customers/${credential.clientId}/${resource}`, {
      headers: { 'x-api-key': credential.apiKey, 'x-forwarded-for': from },
    });

  describe('rotation', () => {
    test('when the key was rotated with an overlap, then the previous key and the new one both work until the overlap ends', async () => {
      const original = await issueCredential(views);
      const rotated = await rotateCredential(views, original, '2026-11-21T09:00:00.000Z');

      expect((await read(original)).status).toBe(200);
      expect((await read(rotated)).status).toBe(200);
    });

    test('when the overlap has ended, then the previous key is 401 INVALID_API_KEY at once, with no event needed, and the new key works', async () => {
      const original = await issueCredential(views);
      const rotated = await rotateCredential(views, original, '2026-11-21T09:00:00.000Z');
      clock.set('2026-11-21T09:00:00.000Z');

      const refused = await read(original);

      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('INVALID_API_KEY');
      expect((await read(rotated)).status).toBe(200);
    });

    test('when it is rotated again, then the oldest key stops at once, whatever the first overlap said', async () => {
      const first = await issueCredential(views);
      const second = await rotateCredential(views, first, '2026-11-22T00:00:00.000Z');
      const third = await rotateCredential(views, second, '2026-11-22T00:00:00.000Z', 3);

      expect((await read(first)).body.code).toBe('INVALID_API_KEY');
      expect((await read(second)).status).toBe(200);
      expect((await read(third)).status).toBe(200);
    });

    test('when the credential is revoked during an overlap, then neither key works', async () => {
      const original = await issueCredential(views);
      const rotated = await rotateCredential(views, original, '2026-11-22T00:00:00.000Z');
      await projectEvent(views, READ_VIEWS, authorizationRevokedEvent(rotated, 3));

      expect((await read(original)).status).toBe(401);
      expect((await read(rotated)).status).toBe(401);
    });
  });

  describe('allow list', () => {
    test('when the client address is inside a listed range or is a listed address, then the read is served', async () => {
      const credential = await issueCredential(views, { allowedCidrs: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'] });

      expect((await read(credential, '203.0.113.200')).status).toBe(200);
      expect((await read(credential, '2001:db8::1')).status).toBe(200);
    });

    test('when the client address is outside the list, then 403 ADDRESS_NOT_ALLOWED', async () => {
      const credential = await issueCredential(views, { allowedCidrs: ['203.0.113.0/24'] });

      const refused = await read(credential, '192.0.2.1');

      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: 'Forbidden', code: 'ADDRESS_NOT_ALLOWED' });
    });

    test('when the address arrives IPv4-mapped, then it is compared as the IPv4 address it carries', async () => {
      const credential = await issueCredential(views, { allowedCidrs: ['203.0.113.0/24'] });

      expect((await read(credential, '::ffff:203.0.113.9')).status).toBe(200);
      expect((await read(credential, '::ffff:192.0.2.1')).status).toBe(403);
    });

    test('when the credential has no allow list, then every address is served', async () => {
      const credential = await issueCredential(views);

      expect((await read(credential, '192.0.2.1')).status).toBe(200);
    });

    test('when the address is not allowed, then it is checked after step 7 and before the rate limit (8) and the scope (9)', async () => {
      const listed = await issueCredential(views, { allowedCidrs: ['203.0.113.0/24'], scopes: ['qr_score'] });
      const wrongKey = { ...listed, apiKey: (await issueCredential(views)).apiKey };
      const revoked = await issueCredential(views, { allowedCidrs: ['203.0.113.0/24'] });
      await revokeCredential(views, revoked);

      // Steps 6 and 7 come first: a wrong key or an inactive credential is told so from anywhere.
      expect((await read(wrongKey, '192.0.2.1')).body.code).toBe('INVALID_API_KEY');
      expect((await read(revoked, '192.0.2.1')).body.code).toBe('CREDENTIAL_INACTIVE');
      // Before the scope: a resource it may not read is still ADDRESS_NOT_ALLOWED from outside.
      expect((await read(listed, '192.0.2.1', 'pillars')).body.code).toBe('ADDRESS_NOT_ALLOWED');
      // Before the rate limit, and not counted by it: the limit of 2 is intact for the allowed address.
      for (let i = 0; i < 3; i += 1) expect((await read(listed, '192.0.2.1')).status).toBe(403);
      expect((await read(listed, '203.0.113.1')).status).toBe(200);
      expect((await read(listed, '203.0.113.1')).status).toBe(200);
      expect((await read(listed, '203.0.113.1')).status).toBe(429);
    });
  });
});
