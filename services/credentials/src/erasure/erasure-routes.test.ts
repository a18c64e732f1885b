import { EVENT_TYPES, PURGES_TOPIC, TOPICS } from '@rsd/contracts';
import { purgedRecord } from '@rsd/consumers';
import { anAuditRecord, request, signToken, valuesOn } from '@rsd/testkit';
import { anAccessRecord, startCredentials, type CredentialsHarness } from '../../../../test/support/credentials-harness';

const ORG = 'acme';
const OTHER = 'globex';
const DAY_MS = 86_400_000;

describe('credentials service: offboarding and erasure (decision 56)', () => {
  let h: CredentialsHarness;
  const tokens: Record<string, string> = {};

  beforeEach(async () => {
    h = await startCredentials();
    for (const [name, org, scope] of [
      ['offboarder', ORG, 'organizations:delete'],
      ['writer', ORG, 'authorizations:write'],
      ['otherWriter', OTHER, 'authorizations:write'],
      ['otherOffboarder', OTHER, 'organizations:delete'],
    ] as const) {
      tokens[name] = await signToken({ org, scope, sub: `${name}@example` });
    }
  });
  afterEach(() => h.close());

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const json = { 'content-type': 'application/json' };
  const grant = async (org: string, token: string, body: object = {}) => {
    const created = await request(`${h.app.baseUrl}/v1/organizations/${org}/authorizations`, {
      method: 'POST',
      headers: { ...bearer(token), ...json },
      body: JSON.stringify({ recipientType: 'auditor', recipientName: 'Ada Lovelace', scopes: ['qr_score'], ...body }),
    });
    expect(created.status).toBe(201);
    return created.body as { clientId: string; apiKey?: string; claim?: { url: string } };
  };
  const offboard = (query: string, token = tokens.offboarder!, org = ORG) =>
    request(`${h.app.baseUrl}/v1/organizations/${org}${query}`, { method: 'DELETE', headers: bearer(token) });
  const offboarding = (token = tokens.offboarder!, org = ORG) =>
    request(`${h.app.baseUrl}/v1/organizations/${org}/offboarding`, { headers: bearer(token) });
  const events = async () =>
    (await valuesOn(h.eventLog, TOPICS.authorizations)).map(
      (value) => JSON.parse(value) as { type: string; data: Record<string, unknown> },
    );

  test('when the confirmation is missing or names another organization, or the token lacks organizations:delete, then nothing is done', async () => {
    const kept = await grant(ORG, tokens.writer!);

    const answers = [
      await offboard(''),
      await offboard(`?confirm=${OTHER}`),
      await offboard(`?confirm=${ORG}&confirm=${ORG}`),
      await offboard(`?confirm=${ORG}`, tokens.writer),
      await offboard(`?confirm=${ORG}`, tokens.otherOffboarder),
      await offboarding(tokens.writer),
    ];

    expect(answers.map((answer) => [answer.status, answer.body.code])).toEqual([
      [400, 'OFFBOARDING_NOT_CONFIRMED'],
      [400, 'OFFBOARDING_NOT_CONFIRMED'],
      [400, 'OFFBOARDING_NOT_CONFIRMED'],
      [403, 'INSUFFICIENT_SCOPE'],
      [403, 'FORBIDDEN_ORGANIZATION'],
      [403, 'INSUFFICIENT_SCOPE'],
    ]);
    expect((await h.store.find(ORG, kept.clientId))?.revokedAt).toBeNull();
    expect(await h.subjectKeys.read(`organization:${ORG}`)).toBeUndefined();
    expect((await offboarding()).body.code).toBe('OFFBOARDING_NOT_FOUND');
  });

  test('when an organization is offboarded, then its grants are revoked as offboarded, its key destroyed, this service purges it, and it is done once the other services have', async () => {
    const [first, second] = [await grant(ORG, tokens.writer!), await grant(ORG, tokens.writer!)];
    const other = await grant(OTHER, tokens.otherWriter!);
    await h.accessLog.add([anAccessRecord(first.clientId, 60_000), anAccessRecord(other.clientId, 60_000)]);

    const started = await offboard(`?confirm=${ORG}`);

    expect(started.status).toBe(202);
    expect(started.headers.get('location')).toBe(`/v1/organizations/${ORG}/offboarding`);
    expect(started.body).toEqual({ status: 'pending', startedAt: h.clock.now().toISOString(), doneAt: null });
    const revocations = (await events()).filter((event) => event.type === EVENT_TYPES.authorizationRevoked);
    // Every grant, in whatever order the store lists them.
    expect(revocations.map((event) => [event.data.clientId, event.data.revocationReason]).sort()).toEqual(
      [
        [second.clientId, 'organization_offboarded'],
        [first.clientId, 'organization_offboarded'],
      ].sort(),
    );
    expect((await events()).at(-1)).toMatchObject({ type: EVENT_TYPES.organizationOffboarded, data: { organizationId: ORG } });
    // Its key, and each of its grants' own (what their recipients left under them: alerts' addresses, names given to a link).
    for (const subject of [`organization:${ORG}`, `grant:${first.clientId}`, `grant:${second.clientId}`]) {
      expect(await h.subjectKeys.read(subject)).toMatchObject({ state: 'destroyed' });
    }
    // This service's own purge ran as the event reached its feed (the embedded log waits for it).
    expect(await h.store.list(ORG)).toEqual([]);
    expect(await h.accessLog.page(first.clientId, { limit: 10 })).toEqual([]);
    expect(await h.auditLog.page({ organizationId: ORG }, { limit: 10 })).toEqual([]);
    expect((await offboarding()).body).toEqual(started.body);

    const later = new Date(h.clock.now().getTime() + 5_000);
    await h.eventLog.append(PURGES_TOPIC, [
      purgedRecord({ organizationId: ORG, service: 'read-api', purgedAt: later }),
      purgedRecord({ organizationId: ORG, service: 'notifier', purgedAt: later }),
    ]);

    expect((await offboarding()).body).toEqual({ status: 'done', startedAt: started.body.startedAt, doneAt: later.toISOString() });
    expect((await offboard(`?confirm=${ORG}`)).body).toMatchObject({ status: 'done' });
    // The other organization is untouched.
    expect((await h.store.find(OTHER, other.clientId))?.revokedAt).toBeNull();
    expect(await h.accessLog.page(other.clientId, { limit: 10 })).toHaveLength(1);
    expect((await h.auditLog.page({ organizationId: OTHER }, { limit: 10 })).length).toBeGreaterThan(0);
    expect(await h.subjectKeys.read(`organization:${OTHER}`)).toBeUndefined();
    expect(await h.subjectKeys.read(`grant:${other.clientId}`)).toBeUndefined();
    // The record is answered 30 days after it was done, then no more.
    h.clock.set(new Date(later.getTime() + 30 * DAY_MS - 1));
    expect((await offboarding()).status).toBe(200);
    h.clock.set(new Date(later.getTime() + 30 * DAY_MS));
    expect((await offboarding()).body.code).toBe('OFFBOARDING_NOT_FOUND');
  });

  test("when an organization erases a grant's recipient, then its key is destroyed and its name and addresses are gone, while the grant and its history stay", async () => {
    const erased = await grant(ORG, tokens.writer!);
    const kept = await grant(ORG, tokens.writer!);
    await h.accessLog.add([anAccessRecord(erased.clientId, 60_000), anAccessRecord(kept.clientId, 60_000)]);
    await h.auditLog.add([anAuditRecord(ORG, 0, { clientId: erased.clientId, address: '203.0.113.77' })]);
    const url = (clientId: string, org = ORG) => `${h.app.baseUrl}/v1/organizations/${org}/authorizations/${clientId}/erasure`;

    const answer = await request(url(erased.clientId), { method: 'POST', headers: bearer(tokens.writer!) });

    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ subject: `grant:${erased.clientId}`, erasedAt: h.clock.now().toISOString() });
    expect(await h.subjectKeys.read(`grant:${erased.clientId}`)).toMatchObject({ state: 'destroyed' });
    const record = await h.store.find(ORG, erased.clientId);
    expect(record).toMatchObject({ recipientName: null, revokedAt: null, scopes: ['qr_score'] });
    expect((await h.accessLog.page(erased.clientId, { limit: 10 })).map((entry) => entry.clientAddress)).toEqual([null]);
    const trail = await h.auditLog.page({ organizationId: ORG, clientId: erased.clientId }, { limit: 10 });
    expect(trail.length).toBeGreaterThan(1);
    expect(trail.every((entry) => entry.address === null)).toBe(true);
    expect((await events()).at(-1)).toMatchObject({
      type: EVENT_TYPES.recipientErased,
      data: { organizationId: ORG, clientId: erased.clientId, subject: `grant:${erased.clientId}` },
    });
    expect((await h.store.find(ORG, kept.clientId))?.recipientName).toBe('Ada Lovelace');
    expect((await h.accessLog.page(kept.clientId, { limit: 10 })).map((entry) => entry.clientAddress)).not.toEqual([null]);
    // Another organization's grant, or one that cannot be a Client ID, is no grant of this organization.
    expect((await request(url(kept.clientId, OTHER), { method: 'POST', headers: bearer(tokens.otherWriter!) })).body.code).toBe(
      'AUTHORIZATION_NOT_FOUND',
    );
    expect((await request(url('not-a-client-id'), { method: 'POST', headers: bearer(tokens.writer!) })).body.code).toBe(
      'AUTHORIZATION_NOT_FOUND',
    );
  });

  /**
   * A grant of `org` created for a link (its name sealed under the grant), claimed into a recipient
   * account: a new one, or the one whose key is given.
   */
  const grantClaimedIntoAccount = async (org = ORG, token = tokens.writer!, accountKey?: string) => {
    const linked = await grant(org, token, { keyDelivery: 'claimLink' });
    const opened = await request(linked.claim!.url, {
      method: 'POST',
      headers: { ...json, ...(accountKey ? { 'x-api-key': accountKey } : {}) },
      body: JSON.stringify({ into: 'account', ...(accountKey ? {} : { accountName: 'Ada' }) }),
    });
    expect(opened.status).toBe(201);
    return { linked, ...(opened.body as { accountId: string; accountKey: string }) };
  };
  const lastEvent = async () => (await events()).at(-1);

  test("when an organization erases the recipient of a grant an account holds, then the grant's own key goes and the account's stays, with its name on another organization's grant", async () => {
    const { linked, accountId, accountKey } = await grantClaimedIntoAccount();
    const other = await grantClaimedIntoAccount(OTHER, tokens.otherWriter, accountKey);

    const answer = await request(`${h.app.baseUrl}/v1/organizations/${ORG}/authorizations/${linked.clientId}/erasure`, {
      method: 'POST',
      headers: bearer(tokens.writer!),
    });

    expect(answer.body).toMatchObject({ subject: `grant:${linked.clientId}` });
    expect(await h.subjectKeys.read(`grant:${linked.clientId}`)).toMatchObject({ state: 'destroyed' });
    expect((await h.subjectKeys.read(`account:${accountId}`))?.state).not.toBe('destroyed');
    expect(await lastEvent()).toMatchObject({
      type: EVENT_TYPES.recipientErased,
      data: { organizationId: ORG, clientId: linked.clientId, subject: `grant:${linked.clientId}` },
    });
    expect((await h.store.findAccount(accountId))?.name).toBe('Ada');
    expect(await h.store.find(ORG, linked.clientId)).toMatchObject({ recipientName: null, recipientAccountName: null });
    expect(await h.store.find(OTHER, other.linked.clientId)).toMatchObject({ recipientAccountId: accountId, recipientAccountName: 'Ada' });
  });

  test('when a recipient account that holds no grant erases itself, then its key and name go and its erasure is told all the same', async () => {
    const { accountId, accountKey } = await grantClaimedIntoAccount();
    // Its one grant's organization offboarded: the account holds nothing any more.
    expect((await offboard(`?confirm=${ORG}`)).status).toBe(202);
    expect(await h.store.listHeldByAccount(accountId)).toEqual([]);

    const answer = await request(`${h.app.baseUrl}/v1/portfolio/erasure`, { method: 'POST', headers: { 'x-api-key': accountKey } });

    expect(answer).toMatchObject({ status: 202, body: { subject: `account:${accountId}` } });
    expect(await h.subjectKeys.read(`account:${accountId}`)).toMatchObject({ state: 'destroyed' });
    expect((await h.store.findAccount(accountId))?.name).toBeNull();
    // The views (the read API's, the notifier's) forget the account's name on this event.
    expect(await lastEvent()).toMatchObject({
      type: EVENT_TYPES.recipientErased,
      data: { accountId, subject: `account:${accountId}` },
    });
  });

  test('when a recipient account erases itself, then its key is destroyed, its name goes, and so does its data on every grant it holds', async () => {
    const { linked, accountId, accountKey } = await grantClaimedIntoAccount();
    await h.accessLog.add([anAccessRecord(linked.clientId, 60_000)]);

    const refused = await request(`${h.app.baseUrl}/v1/portfolio/erasure`, { method: 'POST', headers: { 'x-api-key': 'rsk_not-a-key' } });
    const answer = await request(`${h.app.baseUrl}/v1/portfolio/erasure`, { method: 'POST', headers: { 'x-api-key': accountKey } });

    expect(refused.status).toBe(401);
    expect(answer.status).toBe(202);
    expect(answer.body.subject).toBe(`account:${accountId}`);
    // The account's key, and the grant's own: the grant was created for a link, so its name is sealed under the grant.
    for (const subject of [`account:${accountId}`, `grant:${linked.clientId}`]) {
      expect(await h.subjectKeys.read(subject)).toMatchObject({ state: 'destroyed' });
    }
    expect((await h.store.findAccount(accountId))?.name).toBeNull();
    expect(await h.store.find(ORG, linked.clientId)).toMatchObject({
      recipientName: null,
      recipientAccountName: null,
      recipientAccountId: accountId,
    });
    // The read added here, and the claim the service recorded itself.
    expect((await h.accessLog.page(linked.clientId, { limit: 10 })).map((entry) => entry.clientAddress)).toEqual([null, null]);
    // Each held grant's erasure names the grant's key, then the account's own names the account's.
    expect((await events()).slice(-2)).toMatchObject([
      { type: EVENT_TYPES.recipientErased, data: { organizationId: ORG, clientId: linked.clientId, subject: `grant:${linked.clientId}` } },
      { type: EVENT_TYPES.recipientErased, data: { accountId, subject: `account:${accountId}` } },
    ]);
    // The account keeps working: its key still reads its portfolio's offers.
    expect((await request(`${h.app.baseUrl}/v1/portfolio/offers`, { headers: { 'x-api-key': accountKey } })).status).toBe(200);
  });
});
