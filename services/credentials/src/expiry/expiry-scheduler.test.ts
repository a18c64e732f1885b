import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authorizationExpiredSchema, EVENT_TYPES, TOPICS } from '@rsd/contracts';
import { openFileAccessLogStore, openSqliteAuthorizationStore, openSqliteEventLog } from '@rsd/embedded';
import { createLogger, createTokenVerifier, loadConfig } from '@rsd/platform';
import { statusOf } from '@rsd/domain';
import type { AccessLogStore, AuthorizationStore, EventLog } from '@rsd/ports';
import { request, signToken, startApp, type RunningApp } from '@rsd/testkit';
import { buildApp } from '../app';
import { credentialsConfigSchema } from '../config';
import { createOutboxRelay, type OutboxRelay } from '../outbox/outbox-relay';
import { createExpiryScheduler, type ExpiryScheduler } from './expiry-scheduler';

const log = createLogger('credentials', 'silent');

async function typesIn(eventLog: EventLog): Promise<{ type: string }[]> {
  const events: { type: string }[] = [];
  const subscription = await eventLog.subscribe({
    groupId: 'test',
    topics: [TOPICS.authorizations],
    fromBeginning: true,
    handle: (record) => {
      events.push(JSON.parse(record.value));
      return Promise.resolve();
    },
  });
  await subscription.caughtUp;
  await subscription.close();
  return events;
}

describe('expiry scheduler', () => {
  let dir: string;
  let store: AuthorizationStore;
  let accessLog: AccessLogStore;
  let eventLog: EventLog;
  let relay: OutboxRelay;
  let scheduler: ExpiryScheduler;
  let app: RunningApp;
  let now: Date;
  let token: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'expiry-'));
    store = openSqliteAuthorizationStore({ file: join(dir, 'rsd.sqlite') });
    eventLog = openSqliteEventLog({ file: join(dir, 'rsd.sqlite') });
    relay = createOutboxRelay({ store, eventLog, log });
    now = new Date('2026-11-20T10:00:00.000Z');
    const clock = { now: () => now };
    scheduler = createExpiryScheduler({ store, relay, clock, log });
    const config = loadConfig(credentialsConfigSchema, { JWT_HS256_SECRET: 'test-secret-that-is-at-least-32-characters-long' });
    accessLog = await openFileAccessLogStore({ dir: join(dir, 'access-log') });
    app = await startApp(buildApp({ config, store, accessLog, relay, clock, log, verifyToken: createTokenVerifier(config) }));
    token = await signToken({ org: 'acme', scope: 'authorizations:write' });
  });
  afterEach(async () => {
    await scheduler.stop();
    await app.close();
    await relay.stop();
    await store.close();
    await accessLog.close();
    await eventLog.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function create(expiresAt?: string): Promise<string> {
    const response = await request(`${app.baseUrl}/v1/organizations/acme/authorizations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], ...(expiresAt ? { expiresAt } : {}) }),
    });
    expect(response.status).toBe(201);
    return response.body.clientId as string;
  }

  test('when the expiry passes, then exactly one Expired event is emitted and the status becomes expired', async () => {
    const clientId = await create('2026-11-20');

    expect(await scheduler.runOnce()).toBe(0);
    now = new Date('2026-11-21T00:00:00.000Z');
    expect(await scheduler.runOnce()).toBe(1);
    now = new Date('2026-11-21T00:00:05.000Z');
    expect(await scheduler.runOnce()).toBe(0);

    const events = await typesIn(eventLog);
    const expired = events.filter((e) => e.type === EVENT_TYPES.authorizationExpired);
    expect(expired).toHaveLength(1);
    expect(authorizationExpiredSchema.parse(expired[0]).data).toEqual({
      clientId,
      organizationId: 'acme',
      expiredAt: '2026-11-21T00:00:00.000Z',
      revision: 2,
    });
    const record = await store.find('acme', clientId);
    expect(record).toMatchObject({ expiredAt: '2026-11-21T00:00:00.000Z', revision: 2 });
    expect(record && statusOf(record, now)).toBe('expired');
    const read = await request(`${app.baseUrl}/v1/organizations/acme/authorizations/${clientId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(read.body.status).toBe('expired');
  });

  test('when authorizations are revoked or have no expiry, then the scheduler leaves them alone', async () => {
    const revoked = await create('2026-11-20');
    await create();
    await request(`${app.baseUrl}/v1/organizations/acme/authorizations/${revoked}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    now = new Date('2027-01-01T00:00:00.000Z');

    expect(await scheduler.runOnce()).toBe(0);

    expect((await typesIn(eventLog)).map((e) => e.type)).toEqual([
      EVENT_TYPES.authorizationCreated,
      EVENT_TYPES.authorizationCreated,
      EVENT_TYPES.authorizationRevoked,
    ]);
  });

  test('when started, then the scheduler expires due authorizations on its own', async () => {
    const clientId = await create('2026-11-20');
    now = new Date('2026-11-21T00:00:00.000Z');

    scheduler.start(10);
    for (let i = 0; i < 100 && !(await store.find('acme', clientId))?.expiredAt; i += 1) await new Promise((r) => setTimeout(r, 10));
    await scheduler.stop();

    expect((await typesIn(eventLog)).filter((e) => e.type === EVENT_TYPES.authorizationExpired)).toHaveLength(1);
  });
});
