import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteWebhookStore } from '@rsd/embedded';
import { ApiError, createLogger, loadConfig, systemClock } from '@rsd/platform';
import type { WebhookStore } from '@rsd/ports';
import { request, startApp, type RunningApp } from '@rsd/testkit';
import { buildApp } from '../app';
import { notifierConfigSchema } from '../config';
import { secretSealer } from './secret-sealing';
import { grantWebhooks, type WebhookOwnerDeclaration } from './webhook-owners';

// Decision 45's promise to the owners to come (decisions 42 and 44): a kind of owner is a declaration,
// and the whole lifecycle follows from it. Here a second declaration, under its own path and with its
// own authentication, beside the grants', over the embedded store.

const config = loadConfig(notifierConfigSchema, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
const log = createLogger('notifier', 'silent');

/** An owner kind for this test: `/teams/{teamId}`, authenticated by `x-team-key: <teamId>-key`. */
const teams: WebhookOwnerDeclaration = {
  ...grantWebhooks(() => Promise.reject(new Error('not a grant')), config),
  path: '/teams/:teamId',
  authenticate: (req, _res, [teamId]) => {
    if (req.headers['x-team-key'] !== `${teamId}-key`) return Promise.reject(new ApiError('INVALID_API_KEY', 'not this team'));
    // Kept under a key of its own, as webhookOwnerKey gives every kind after the grants.
    return Promise.resolve({ owner: { kind: 'grant', clientId: `team:${teamId}` }, organizationId: 'acme', refusedEvents: () => [] });
  },
  limit: 2,
  noun: 'team',
};

describe('a second kind of webhook owner, declared', () => {
  let dir: string;
  let store: WebhookStore;
  let app: RunningApp;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rsd-owners-'));
    store = openSqliteWebhookStore({ file: join(dir, 'rsd.sqlite') });
    const deps = {
      config,
      log,
      store,
      sealer: secretSealer(randomBytes(32)),
      policy: { allowPrivate: true },
      resolve: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
      clock: systemClock,
      attemptsListed: 10,
    };
    app = await startApp(buildApp({ ...deps, owners: [teams] }));
  });

  afterEach(async () => {
    await app.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (teamId: string, path: string, method = 'GET', body?: unknown) =>
    request<{ id?: string; code?: string; status?: string; secret?: string; webhooks?: { id: string }[] }>(
      `${app.baseUrl}/v1/teams/${teamId}/webhooks${path}`,
      {
        method,
        headers: { 'x-team-key': `${teamId}-key`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      },
    );

  test('when it is declared, then its whole lifecycle answers under its path, with its authentication, its limit and its own webhooks only', async () => {
    const created = await call('red', '', 'POST', {
      url: 'http://127.0.0.1:9/x',
      events: ['score.updated'],
      conditions: { scoreBelow: 50 },
    });
    const id = created.body.id!;

    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/v1/teams/red/webhooks/${id}`);
    expect((await call('red', `/${id}`, 'PATCH', { enabled: false })).body.status).toBe('paused');
    expect((await call('red', `/${id}/rotate-secret`, 'POST', { overlapSeconds: 10 })).status).toBe(201);
    expect((await call('red', `/${id}/test`, 'POST')).body.code).toBe('WEBHOOK_NOT_ACTIVE');
    expect((await call('red', `/${id}`, 'PATCH', { enabled: true })).body.status).toBe('active');
    expect((await call('red', `/${id}/test`, 'POST')).status).toBe(202);
    expect((await call('red', `/${id}/deliveries`)).status).toBe(200);
    // Another team sees none of it; a wrong key is refused before anything.
    expect((await call('blue', `/${id}`, 'PATCH', { enabled: false })).body.code).toBe('WEBHOOK_NOT_FOUND');
    expect((await call('blue', '')).body.webhooks).toEqual([]);
    const wrongKey = await request<{ code: string }>(`${app.baseUrl}/v1/teams/red/webhooks`, { headers: { 'x-team-key': 'blue-key' } });
    expect(wrongKey.body.code).toBe('INVALID_API_KEY');
    await call('red', '', 'POST', { url: 'http://127.0.0.1:9/y', events: ['score.updated'] });
    const third = await call('red', '', 'POST', { url: 'http://127.0.0.1:9/z', events: ['score.updated'] });
    expect([third.status, third.body.code]).toEqual([409, 'WEBHOOK_LIMIT_REACHED']);
    expect((await call('red', `/${id}`, 'DELETE')).status).toBe(204);
    // The grants' path is not served: this notifier was given the one declaration.
    expect((await request(`${app.baseUrl}/v1/customers/rs_AAAAAAAAAAAAAAAAAAAAAAAA/webhooks`)).status).toBe(404);
  });
});
