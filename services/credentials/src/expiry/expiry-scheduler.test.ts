import { authorizationAlertedSchema, authorizationExpiredSchema, EVENT_TYPES, TOPICS } from '@rsd/contracts';
import { statusOf } from '@rsd/domain';
import type { EventLog } from '@rsd/ports';
import { eventually, request, signToken, valuesOn } from '@rsd/testkit';
import { startCredentials, type CredentialsHarness } from '../../../../test/support/credentials-harness';
import { createExpiryScheduler, type ExpiryScheduler } from './expiry-scheduler';

async function typesIn(eventLog: EventLog): Promise<{ type: string }[]> {
  return (await valuesOn(eventLog, TOPICS.authorizations)).map((value) => JSON.parse(value) as { type: string });
}

describe('expiry scheduler', () => {
  let h: CredentialsHarness;
  let scheduler: ExpiryScheduler;
  let token: string;

  beforeEach(async () => {
    h = await startCredentials();
    scheduler = createExpiryScheduler({ store: h.store, relay: h.relay, clock: h.clock, log: h.log });
    token = await signToken({ org: 'acme', scope: 'authorizations:write' });
  });
  afterEach(async () => {
    await scheduler.stop();
    await h.close();
  });

  async function create(expiresAt?: string): Promise<string> {
    const response = await request(`${h.app.baseUrl}/v1/organizations/acme/authorizations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], ...(expiresAt ? { expiresAt } : {}) }),
    });
    expect(response.status).toBe(201);
    return response.body.clientId as string;
  }

  test('when the expiry passes, then exactly one Expired event is emitted and the status becomes expired', async () => {
    const clientId = await create('2026-11-20');

    // Made a day before it expires: its first check raises the expiry notice (decision 44), and expires nothing.
    expect(await scheduler.runOnce()).toBe(0);
    h.clock.set(new Date('2026-11-21T00:00:00.000Z'));
    expect(await scheduler.runOnce()).toBe(1);
    h.clock.set(new Date('2026-11-21T00:00:05.000Z'));
    expect(await scheduler.runOnce()).toBe(0);

    const events = await typesIn(h.eventLog);
    const expired = events.filter((e) => e.type === EVENT_TYPES.authorizationExpired);
    expect(expired).toHaveLength(1);
    expect(authorizationExpiredSchema.parse(expired[0]).data).toEqual({
      clientId,
      organizationId: 'acme',
      expiredAt: '2026-11-21T00:00:00.000Z',
      revision: 3,
      // Decision 54: the scheduler is the system, acting on no request.
      audit: {
        action: 'authorization.expired',
        actor: { type: 'system', id: 'expiry-scheduler', via: null },
        requestId: null,
        address: null,
      },
    });
    const record = await h.store.find('acme', clientId);
    expect(record).toMatchObject({ expiredAt: '2026-11-21T00:00:00.000Z', revision: 3 });
    expect(record && statusOf(record, h.clock.now())).toBe('expired');
    const read = await request(`${h.app.baseUrl}/v1/organizations/acme/authorizations/${clientId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(read.body.status).toBe('expired');
  });

  test('when a grant nears its expiry, then authorization.expiring is raised 7 days and 1 day before, once each, and not for one without expiry', async () => {
    h.clock.set(new Date('2026-11-01T00:00:00.000Z'));
    const clientId = await create('2026-11-20');
    await create();
    const notices = async () =>
      (await typesIn(h.eventLog))
        .filter((e) => e.type === EVENT_TYPES.authorizationAlerted)
        .map((e) => authorizationAlertedSchema.parse(e).data);

    // A date expires at the end of that day (UTC): 2026-11-21T00:00:00Z.
    await scheduler.runOnce();
    h.clock.set(new Date('2026-11-13T23:59:59.000Z'));
    await scheduler.runOnce();
    expect(await notices()).toEqual([]);

    h.clock.set(new Date('2026-11-14T00:00:00.000Z'));
    await scheduler.runOnce();
    await scheduler.runOnce();
    h.clock.set(new Date('2026-11-19T23:59:59.000Z'));
    await scheduler.runOnce();
    expect(await notices()).toHaveLength(1);

    h.clock.set(new Date('2026-11-20T00:00:01.000Z'));
    await scheduler.runOnce();
    await scheduler.runOnce();
    const sent = await notices();
    expect(sent).toEqual([
      expect.objectContaining({
        clientId,
        alert: 'authorization.expiring',
        expiresAt: '2026-11-21T00:00:00.000Z',
        at: '2026-11-14T00:00:00.000Z',
      }),
      expect.objectContaining({
        clientId,
        alert: 'authorization.expiring',
        expiresAt: '2026-11-21T00:00:00.000Z',
        at: '2026-11-20T00:00:01.000Z',
      }),
    ]);
    expect(JSON.stringify(sent)).not.toMatch(/rsk_|keyDigest/);
  });

  test('when authorizations are revoked or have no expiry, then the scheduler leaves them alone', async () => {
    const revoked = await create('2026-11-20');
    await create();
    await request(`${h.app.baseUrl}/v1/organizations/acme/authorizations/${revoked}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    h.clock.set(new Date('2027-01-01T00:00:00.000Z'));

    expect(await scheduler.runOnce()).toBe(0);

    expect((await typesIn(h.eventLog)).map((e) => e.type)).toEqual([
      EVENT_TYPES.authorizationCreated,
      EVENT_TYPES.authorizationCreated,
      EVENT_TYPES.authorizationRevoked,
    ]);
  });

  test('when started, then the scheduler expires due authorizations on its own', async () => {
    const clientId = await create('2026-11-20');
    h.clock.set(new Date('2026-11-21T00:00:00.000Z'));

    scheduler.start(10);
    await eventually(async () => expect((await h.store.find('acme', clientId))?.expiredAt).toBeTruthy());
    await scheduler.stop();

    expect((await typesIn(h.eventLog)).filter((e) => e.type === EVENT_TYPES.authorizationExpired)).toHaveLength(1);
  });
});
