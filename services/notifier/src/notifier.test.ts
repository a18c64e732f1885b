import { randomBytes, randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_TYPES, TOPICS, webhookChangedSchema, type CalculatedScore, type Scope } from '@rsd/contracts';
import {
  authorizationCreated,
  authorizationRevoked,
  digestApiKey,
  generateApiKey,
  generateClientId,
  type StoredAuthorization,
} from '@rsd/domain';
import { createLogger, loadConfig, systemClock } from '@rsd/platform';
import * as embeddedAdapters from '@rsd/embedded';
import { embeddedRuntime, type OpenedRuntime } from '@rsd/runtime';
import {
  aCalculatedScore,
  anEvent,
  eventually,
  eventuallyDefined,
  request,
  startApp,
  startWebhookReceiver,
  webhookSignatureVerifies,
  type RunningApp,
} from '@rsd/testkit';
import { notifierConfigSchema } from './config';
import type { RunningService, WebhookStore } from '@rsd/ports';
import { createNotifierModule } from './notifier-module';
import type { Resolve } from './delivery/send-webhook';

// The notifier over the embedded runtime's real adapters (the SQLite database in a temp dir, the
// event log it shares with the other services), its API over real HTTP, and a real HTTP receiver on
// loopback. Events go into the log as the credentials and score-ingest services write them.

const ORG = 'acme';
const log = createLogger('notifier', (process.env.TEST_LOG_LEVEL as 'silent' | undefined) ?? 'silent');

describe('the notifier, on the embedded runtime', () => {
  let dir: string;
  let runtime: OpenedRuntime;
  let notifier: RunningService;
  let app: RunningApp;
  /** The notifier's queue, read beside it (the same database): the tests see when it is empty. */
  let queue: WebhookStore;
  let receivers: { close(): Promise<void> }[];
  /** Names resolve through this map: a stand-in for DNS. */
  const dns = new Map<string, string>();
  const webhookKey = randomBytes(32).toString('base64');
  /** Names whose answer waits until the test releases it: a slow DNS server the caller controls. */
  const slowNames = new Map<string, { reached(): void; released: Promise<void> }>();
  const resolve: Resolve = async (hostname) => {
    const slow = slowNames.get(hostname);
    if (slow) {
      slow.reached();
      await slow.released;
    }
    const address = dns.get(hostname);
    if (!address) throw new Error('ENOTFOUND');
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };

  async function start(env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }): Promise<void> {
    runtime = await embeddedRuntime(embeddedAdapters, { DATA_DIR: dir, READ_VIEWS_DB: 'rsd_read_views', NOTIFIER_DB: 'notifier' }, log);
    // The runner would make it into the data directory (WEBHOOK_KEY_SECRET); a restart here keeps it as that would.
    const config = loadConfig(notifierConfigSchema, { WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_SECRET_KEY: webhookKey, ...env });
    // random 0: every retry waits the schedule's floor (1 s), so retries are watched in seconds.
    notifier = await createNotifierModule({
      config,
      runtime,
      clock: systemClock,
      log,
      resolve,
      random: () => 0,
    });
    await notifier.caughtUp;
    queue = await runtime.openWebhookStore();
    app = await startApp(notifier.app);
  }

  async function stop(): Promise<void> {
    await app.close();
    await notifier.stop();
    await runtime.close();
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rsd-notifier-'));
    receivers = [];
    dns.clear();
    slowNames.clear();
    await start();
  });

  afterEach(async () => {
    await stop();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await rm(dir, { recursive: true, force: true });
  });

  async function receiver(failures = 0) {
    const started = await startWebhookReceiver(failures);
    receivers.push(started);
    return started;
  }

  /** An authorization as the credentials service creates it: its record and the Created event in the log. */
  async function anAuthorization(
    scopes: Scope[] = ['qr_score'],
    allowedCidrs: string[] | null = null,
  ): Promise<{ record: StoredAuthorization; apiKey: string }> {
    const apiKey = generateApiKey('rsk');
    const record: StoredAuthorization = {
      clientId: generateClientId('rs'),
      organizationId: ORG,
      recipientType: 'insurance_provider',
      recipientName: null,
      scopes,
      keyDigest: digestApiKey(apiKey),
      expiresAt: null,
      createdAt: new Date().toISOString(),
      revokedAt: null,
      expiredAt: null,
      allowedCidrs,
      revision: 1,
    };
    const event = authorizationCreated(record, { id: randomUUID(), time: new Date() });
    await runtime.eventLog.append(TOPICS.authorizations, [{ key: record.clientId, value: JSON.stringify(event) }]);
    return { record, apiKey };
  }

  async function revoke(record: StoredAuthorization): Promise<void> {
    const revoked = {
      ...record,
      revokedAt: new Date().toISOString(),
      revocationReason: 'organization' as const,
      revision: record.revision + 1,
    };
    const event = authorizationRevoked(revoked, { id: randomUUID(), time: new Date() });
    await runtime.eventLog.append(TOPICS.authorizations, [{ key: record.clientId, value: JSON.stringify(event) }]);
  }

  /**
   * Resolves once every event in the log so far has been planned and every delivery it queued has been
   * attempted: a later event (a witness grant's end) reaches the witness's webhook, the events are
   * handled in the log's order, and then the queue is empty. What was not sent by then never will be.
   */
  async function settled(): Promise<void> {
    const witness = await anAuthorization();
    const seen = await receiver();
    expect((await subscribe(witness, { url: seen.url, events: ['authorization.ended'] })).status).toBe(201);
    await revoke(witness.record);
    await eventuallyDefined(() => seen.received[0]);
    await eventually(async () => expect((await queue.queueStats()).depth).toBe(0));
  }

  /** A score as score-ingest emits it: stamped with the time it was received. */
  async function score(overrides: Partial<CalculatedScore> & { scoreDate: string }): Promise<void> {
    const event = anEvent(EVENT_TYPES.scoreCalculated, aCalculatedScore(ORG, overrides.scoreDate, overrides), {
      source: '/score-ingest',
      time: new Date(),
    });
    await runtime.eventLog.append(TOPICS.scores, [{ key: ORG, value: JSON.stringify(event) }]);
  }

  function subscribe(credential: { record: StoredAuthorization; apiKey: string }, body: object) {
    return request<{ id: string; secret: string; status: string; url: string; events: string[]; code?: string; message?: string }>(
      `${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks`,
      { method: 'POST', headers: { 'x-api-key': credential.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) },
    );
  }

  const ALL_EVENTS = ['score.updated', 'grade.changed', 'authorization.ended'];

  function patch(credential: { apiKey: string }, url: string, body: object) {
    return request<{ status?: string; url?: string; code?: string }>(url, {
      method: 'PATCH',
      headers: { 'x-api-key': credential.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  test('when a webhook is paused, then a change reaches it no more and a test is refused with 409; re-enabled, it gets the next change', async () => {
    const credential = await anAuthorization();
    const target = await receiver();
    const created = await subscribe(credential, { url: target.url, events: ['score.updated'] });
    const item = `${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks/${created.body.id}`;

    const paused = await patch(credential, item, { enabled: false });

    expect([paused.status, paused.body.status]).toEqual([200, 'paused']);
    await score({ scoreDate: '2026-11-19', score: 70 });
    const tested = await request<{ code: string }>(`${item}/test`, { method: 'POST', headers: { 'x-api-key': credential.apiKey } });
    expect([tested.status, tested.body.code]).toEqual([409, 'WEBHOOK_NOT_ACTIVE']);
    await settled();
    expect(target.received).toHaveLength(0);

    expect((await patch(credential, item, { enabled: true })).body.status).toBe('active');
    await score({ scoreDate: '2026-11-20', score: 71 });
    const delivered = await eventuallyDefined(() => target.received[0]);
    expect(JSON.parse(delivered.body)).toMatchObject({ type: 'score.updated', data: { score: 71 } });
    await settled();
    expect(target.received).toHaveLength(1);
  });

  test('when a PATCH names an event the scopes do not allow, then 403 INSUFFICIENT_SCOPE; allowed, the webhook changes as asked and only there', async () => {
    const credential = await anAuthorization(['score_trend']);
    const target = await receiver();
    const created = await subscribe(credential, { url: target.url, events: ['grade.changed'] });
    const item = `${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks/${created.body.id}`;

    const refused = await patch(credential, item, { events: ['score.updated'] });
    const changed = await patch(credential, item, { events: ['grade.changed', 'authorization.ended'], conditions: { gradeChanged: true } });
    const other = await anAuthorization(['score_trend']);
    const foreign = await patch(other, `${app.baseUrl}/v1/customers/${other.record.clientId}/webhooks/${created.body.id}`, {
      enabled: false,
    });

    expect([refused.status, refused.body.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    expect([changed.status, changed.body]).toEqual([
      200,
      expect.objectContaining({ events: ['grade.changed', 'authorization.ended'], conditions: { gradeChanged: true }, status: 'active' }),
    ]);
    expect([foreign.status, foreign.body.code]).toEqual([404, 'WEBHOOK_NOT_FOUND']);
    const put = await request(item, { method: 'PUT', headers: { 'x-api-key': credential.apiKey } });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'PATCH, DELETE']);
    const getTest = await request(`${item}/test`, { headers: { 'x-api-key': credential.apiKey } });
    expect([getTest.status, getTest.headers.get('allow')]).toEqual([405, 'POST']);
  });

  test('when the secret is rotated with overlapSeconds 0, then the next delivery carries the new signature alone', async () => {
    const credential = await anAuthorization();
    const target = await receiver();
    const created = await subscribe(credential, { url: target.url, events: ['score.updated'] });
    const item = `${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks/${created.body.id}`;

    const rotated = await request<{ secret: string }>(`${item}/rotate-secret`, {
      method: 'POST',
      headers: { 'x-api-key': credential.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ overlapSeconds: 0 }),
    });
    await score({ scoreDate: '2026-11-20' });

    expect(rotated.status).toBe(201);
    const delivered = await eventuallyDefined(() => target.received[0]);
    expect(String(delivered.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(webhookSignatureVerifies(delivered, rotated.body.secret)).toBe(true);
    expect(webhookSignatureVerifies(delivered, created.body.secret)).toBe(false);
  });

  test("when a grant's webhook is created, changed, its secret rotated and deleted, then each change is in the event log for the grant's organization's audit trail, with the recipient as actor and never the URL or a secret (decision 54)", async () => {
    const recorded: string[] = [];
    const written: string[] = [];
    const follower = await runtime.eventLog.subscribe({
      groupId: `audit-${randomUUID()}`,
      topics: [TOPICS.webhookChanges],
      fromBeginning: true,
      handle: (record) => {
        // Decision 56: the log holds the stamp sealed, and hands its followers the value opened.
        written.push(record.value);
        recorded.push(record.opened ?? record.value);
        return Promise.resolve();
      },
    });
    try {
      const credential = await anAuthorization();
      const target = await receiver();
      const headers = { 'x-api-key': credential.apiKey, 'content-type': 'application/json', 'user-agent': 'rsd-cli/1.0.0' };
      const created = await subscribe(credential, { url: target.url, events: ['score.updated'] });
      const item = `${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks/${created.body.id}`;
      expect((await patch(credential, item, { events: ALL_EVENTS })).status).toBe(200);
      const rotated = await request<{ secret: string }>(`${item}/rotate-secret`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ overlapSeconds: 0 }),
      });
      expect(rotated.status).toBe(201);
      // A test delivery changes nothing: it is not in the trail.
      expect((await request(`${item}/test`, { method: 'POST', headers })).status).toBe(202);
      expect((await request(item, { method: 'DELETE', headers })).status).toBe(204);

      // On the embedded log each append waits for its live followers: recorded before each answer.
      const events = recorded.map((value) => webhookChangedSchema.parse(JSON.parse(value)));
      expect(written.every((value) => value.includes('"rsdsealed":1') && !value.includes('"actor"'))).toBe(true);
      expect(events.map((event) => [event.data.audit.action, event.data.audit.actor.via])).toEqual([
        ['webhook.created', 'api'],
        ['webhook.updated', 'api'],
        ['webhook.secret_rotated', 'cli'],
        ['webhook.deleted', 'cli'],
      ]);
      for (const event of events) {
        expect(event.data).toMatchObject({
          organizationId: ORG,
          clientId: credential.record.clientId,
          webhookId: created.body.id,
          audit: {
            actor: { type: 'recipient', id: credential.record.clientId },
            requestId: expect.any(String),
            address: expect.any(String),
          },
        });
      }
      for (const secretOrTarget of [created.body.secret, rotated.body.secret, target.url, credential.apiKey]) {
        expect(recorded.join('\n')).not.toContain(secretOrTarget);
      }
    } finally {
      await follower.close();
    }
  });

  test('when a subscription is created, then the secret is in the 201 only, and the list shows the webhook without it', async () => {
    const credential = await anAuthorization();
    const target = await receiver();

    const created = await subscribe(credential, { url: target.url, events: ALL_EVENTS });

    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: target.url, events: ALL_EVENTS, status: 'active' });
    expect(created.body.id).toMatch(/^wh_/);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.headers.get('location')).toBe(`/v1/customers/${credential.record.clientId}/webhooks/${created.body.id}`);
    const listed = await request(`${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks`, {
      headers: { 'x-api-key': credential.apiKey },
    });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      webhooks: [
        {
          id: created.body.id,
          url: target.url,
          events: ALL_EVENTS,
          status: 'active',
          disabledReason: null,
          conditions: {},
          createdAt: expect.any(String),
        },
      ],
    });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);
  });

  test('when the latest score changes, then the subscription gets a signed score.updated within 5 s, limited to its scopes', async () => {
    const withPillars = await anAuthorization(['qr_score', 'pillar_breakdown']);
    const withoutPillars = await anAuthorization(['qr_score']);
    const [first, second] = [await receiver(), await receiver()];
    const a = await subscribe(withPillars, { url: first.url, events: ['score.updated'] });
    const b = await subscribe(withoutPillars, { url: second.url, events: ['score.updated'] });

    await score({ scoreDate: '2026-11-20', score: 81, grade: 'Strengthen' });

    // The wait's bound is the 5 s: how long a delivery takes is measured by the webhooks benchmark (delivery latency p50/p99/max).
    const [toA] = await eventuallyDefined(() => (first.received.length > 0 ? first.received : undefined), { timeoutMs: 5_000 });
    const [toB] = await eventuallyDefined(() => (second.received.length > 0 ? second.received : undefined), { timeoutMs: 5_000 });
    expect(webhookSignatureVerifies(toA!, a.body.secret)).toBe(true);
    expect(webhookSignatureVerifies(toB!, b.body.secret)).toBe(true);
    expect(webhookSignatureVerifies(toB!, a.body.secret)).toBe(false);
    expect(JSON.parse(toA!.body)).toEqual({
      type: 'score.updated',
      timestamp: expect.any(String),
      data: {
        clientId: withPillars.record.clientId,
        scoreDate: '2026-11-20',
        score: 81,
        grade: 'Strengthen',
        pillarScores: expect.any(Object),
      },
    });
    expect(JSON.parse(toB!.body).data).toEqual({
      clientId: withoutPillars.record.clientId,
      scoreDate: '2026-11-20',
      score: 81,
      grade: 'Strengthen',
    });
    expect(toA!.headers['content-type']).toBe('application/json');
  });

  test('when the receiver fails twice, then it gets three attempts with the same webhook-id and the log shows them', async () => {
    const credential = await anAuthorization();
    const target = await receiver(2);
    const created = await subscribe(credential, { url: target.url, events: ['score.updated'] });

    await score({ scoreDate: '2026-11-20' });

    await eventuallyDefined(() => (target.received.length === 3 ? true : undefined), { timeoutMs: 15_000 });
    expect(target.received.map((attempt) => attempt.answered)).toEqual([500, 500, 204]);
    expect(new Set(target.received.map((attempt) => attempt.headers['webhook-id'])).size).toBe(1);
    expect(target.received.every((attempt) => webhookSignatureVerifies(attempt, created.body.secret))).toBe(true);
    const deliveries = await request<{ deliveries: { attempt: number; status: string; responseCode: number; failure: string | null }[] }>(
      `${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks/${created.body.id}/deliveries`,
      { headers: { 'x-api-key': credential.apiKey } },
    );
    expect(
      deliveries.body.deliveries.map(({ attempt, status, responseCode, failure }) => ({ attempt, status, responseCode, failure })),
    ).toEqual([
      { attempt: 3, status: 'succeeded', responseCode: 204, failure: null },
      { attempt: 2, status: 'failed', responseCode: 500, failure: 'response_status' },
      { attempt: 1, status: 'failed', responseCode: 500, failure: 'response_status' },
    ]);
  }, 20_000);

  test("when the webhook's host resolves outside the grant's allow list when a delivery is due, then it and a test are skipped and listed, unsent and not retried; resolved inside again, the next is delivered", async () => {
    const credential = await anAuthorization(['qr_score'], ['127.0.0.1/32']);
    const target = await receiver();
    dns.set('hooks.example', '127.0.0.1');
    const created = await subscribe(credential, {
      url: `http://hooks.example:${new URL(target.url).port}/hooks`,
      events: ['score.updated'],
    });
    expect(created.status).toBe(201);
    const hook = `${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks/${created.body.id}`;
    const listed = async (count: number) =>
      untilAsync(async () => {
        const answer = await request<{ deliveries: { eventType: string; status: string; skipped?: string; failure: string | null }[] }>(
          `${hook}/deliveries`,
          { headers: { 'x-api-key': credential.apiKey } },
        );
        return answer.body.deliveries.length >= count ? answer.body.deliveries : undefined;
      }, 10_000);

    // Still a loopback address, but not the one the grant allows: checked when the attempt connects.
    dns.set('hooks.example', '127.0.0.2');
    await score({ scoreDate: '2026-11-20', score: 40 });
    await listed(1);
    const tested = await request(`${hook}/test`, { method: 'POST', headers: { 'x-api-key': credential.apiKey } });
    expect(tested.status).toBe(202);
    await listed(2);
    dns.set('hooks.example', '127.0.0.1');
    await score({ scoreDate: '2026-11-21', score: 45 });

    const deliveries = await listed(3);
    expect(deliveries.map(({ eventType, status, skipped, failure }) => ({ eventType, status, skipped, failure }))).toEqual([
      { eventType: 'score.updated', status: 'succeeded', skipped: undefined, failure: null },
      { eventType: 'webhook.test', status: 'skipped', skipped: 'address_not_allowed', failure: null },
      { eventType: 'score.updated', status: 'skipped', skipped: 'address_not_allowed', failure: null },
    ]);
    expect(target.received.map((delivery) => JSON.parse(delivery.body).data.score)).toEqual([45]);
    const [webhook] = (
      await request<{ webhooks: { status: string }[] }>(`${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks`, {
        headers: { 'x-api-key': credential.apiKey },
      })
    ).body.webhooks;
    expect(webhook?.status).toBe('active');
  }, 20_000);

  test("when one grant's receiver hangs with 40 tests queued, then another grant's test arrives within one attempt's timeout, not after them (decision 50)", async () => {
    await stop();
    await start({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_CONCURRENCY: '4', WEBHOOK_ATTEMPT_TIMEOUT_MS: '2000' });
    // A receiver that reads each delivery and never answers: every attempt holds its slot for the whole timeout.
    let hungAttempts = 0;
    const hanging = createHttpServer((req) => {
      hungAttempts += 1;
      req.resume();
    });
    await new Promise<void>((listening) => hanging.listen(0, '127.0.0.1', listening));
    receivers.push({
      close: () => {
        hanging.closeAllConnections();
        return new Promise<void>((closed) => hanging.close(() => closed()));
      },
    });
    const busy = await anAuthorization();
    const busyHook = await subscribe(busy, {
      url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hooks`,
      events: ['score.updated'],
    });
    const other = await anAuthorization();
    const target = await receiver();
    const otherHook = await subscribe(other, { url: target.url, events: ['score.updated'] });
    const testOf = (credential: { record: StoredAuthorization; apiKey: string }, id: string) =>
      request(`${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks/${id}/test`, {
        method: 'POST',
        headers: { 'x-api-key': credential.apiKey },
      });
    for (let queued = 0; queued < 40; queued += 1) expect((await testOf(busy, busyHook.body.id)).status).toBe(202);

    expect((await testOf(other, otherHook.body.id)).status).toBe(202);
    await eventuallyDefined(() => target.received[0], { timeoutMs: 15_000 });

    // In turn after at most the attempts in flight (4, each ending at the 2 s timeout; a few more may start beside it):
    // counted, not timed. In the queue's order it would come after the 40 hung ones.
    expect(hungAttempts).toBeLessThanOrEqual(2 * 4);
  }, 30_000);

  test('when the notifier stops in the middle of retries, then after a restart the delivery completes, once, with the same webhook-id', async () => {
    const credential = await anAuthorization();
    const target = await receiver(1);
    await subscribe(credential, { url: target.url, events: ['score.updated'] });
    await score({ scoreDate: '2026-11-20' });
    await eventuallyDefined(() => (target.received.length === 1 ? true : undefined));

    await stop();
    await start();

    await eventuallyDefined(() => (target.received.length === 2 ? true : undefined), { timeoutMs: 10_000 });
    await settled();
    expect(target.received.map((attempt) => attempt.answered)).toEqual([500, 204]);
    expect(target.received[1]?.headers['webhook-id']).toBe(target.received[0]?.headers['webhook-id']);
  }, 20_000);

  test('when the secret key changed since a subscription was made, then its attempts fail on the retry schedule and the operator is told', async () => {
    const credential = await anAuthorization();
    const target = await receiver();
    const created = await subscribe(credential, { url: target.url, events: ['score.updated'] });
    await stop();
    await start({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') });

    await score({ scoreDate: '2026-11-20' });

    const deliveries = await eventually(async () => {
      const answer = await request<{ deliveries: { attempt: number; failure: string }[] }>(
        `${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks/${created.body.id}/deliveries`,
        { headers: { 'x-api-key': credential.apiKey } },
      );
      expect(answer.body.deliveries.length).toBeGreaterThanOrEqual(1);
      return answer.body.deliveries;
    });
    expect(deliveries[0]).toMatchObject({ failure: 'connection_failed' });
    // Still queued, for a retry on the schedule: with random 0 each waits its 1-s floor, so the next is
    // due at least a second per attempt after the first (a failure retried at once would be due sooner).
    const [waiting] = await queue.due(new Date(Date.now() + 3_600_000), 10);
    expect(waiting).toMatchObject({ webhookId: created.body.id, attempts: expect.any(Number) });
    expect(waiting!.attempts).toBeGreaterThanOrEqual(1);
    expect(Date.parse(waiting!.dueAt) - Date.parse(waiting!.firstAttemptAt!)).toBeGreaterThanOrEqual(waiting!.attempts * 1_000);
    expect(target.received).toEqual([]);
  });

  test('when the authorization is revoked, then authorization.ended is sent once and nothing after it', async () => {
    const credential = await anAuthorization();
    const target = await receiver();
    await subscribe(credential, { url: target.url, events: ALL_EVENTS });

    await revoke(credential.record);
    await revoke(credential.record);
    await eventuallyDefined(() => (target.received.length === 1 ? true : undefined));
    await score({ scoreDate: '2026-11-21' });
    await settled();

    expect(target.received.map((delivery) => JSON.parse(delivery.body))).toEqual([
      {
        type: 'authorization.ended',
        timestamp: expect.any(String),
        data: { clientId: credential.record.clientId, reason: 'revoked', endedAt: expect.any(String) },
      },
    ]);
    const refused = await request(`${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks`, {
      headers: { 'x-api-key': credential.apiKey },
    });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('CREDENTIAL_INACTIVE');
  });

  test('when the grade changes, then grade.changed says from and to; a recalculation that changes nothing sends nothing', async () => {
    const credential = await anAuthorization(['score_trend']);
    const target = await receiver();
    await score({ scoreDate: '2026-11-19', grade: 'Strengthen' });
    await subscribe(credential, { url: target.url, events: ['grade.changed'] });

    await score({ scoreDate: '2026-11-20', grade: 'Sustain', score: 90 });
    await eventuallyDefined(() => (target.received.length === 1 ? true : undefined));
    await score({ scoreDate: '2026-11-20', grade: 'Sustain', score: 90, calculatedAt: '2026-11-20T07:00:00.000Z' });
    await settled();

    expect(target.received.map((delivery) => JSON.parse(delivery.body).data)).toEqual([
      { clientId: credential.record.clientId, scoreDate: '2026-11-20', from: 'Strengthen', to: 'Sustain' },
    ]);
  });

  test('when a request is refused, then it gets the documented code: no key, unknown webhook, a scope it lacks, a bad body, the limit', async () => {
    const credential = await anAuthorization(['score_trend']);
    const target = await receiver();
    const base = `${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks`;
    const withKey = { 'x-api-key': credential.apiKey };

    expect((await request(base)).body.code).toBe('MISSING_API_KEY');
    expect((await request(`${app.baseUrl}/v1/customers/not-a-client-id/webhooks`, { headers: withKey })).body.code).toBe(
      'INVALID_CLIENT_ID',
    );
    expect((await request(`${base}/wh_unknown0000000000000000`, { method: 'DELETE', headers: withKey })).body.code).toBe(
      'WEBHOOK_NOT_FOUND',
    );
    expect((await request(`${base}/wh_%00x/deliveries`, { headers: withKey })).body.code).toBe('WEBHOOK_NOT_FOUND');
    const scoped = await subscribe(credential, { url: target.url, events: ['score.updated'] });
    expect([scoped.status, scoped.body]).toEqual([403, expect.objectContaining({ code: 'INSUFFICIENT_SCOPE' })]);
    const invalid = await subscribe(credential, { url: target.url, events: [] });
    expect([invalid.status, invalid.body]).toEqual([400, expect.objectContaining({ code: 'VALIDATION_FAILED' })]);
    const put = await request(base, { method: 'PUT', headers: withKey });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET, POST']);

    for (let n = 0; n < 10; n += 1) expect((await subscribe(credential, { url: target.url, events: ['grade.changed'] })).status).toBe(201);
    const eleventh = await subscribe(credential, { url: target.url, events: ['grade.changed'] });
    expect([eleventh.status, eleventh.body]).toEqual([409, expect.objectContaining({ code: 'WEBHOOK_LIMIT_REACHED' })]);
    const [first] = (await request<{ webhooks: { id: string }[] }>(base, { headers: withKey })).body.webhooks;
    expect((await request(`${base}/${first!.id}`, { method: 'DELETE', headers: withKey })).status).toBe(204);
    expect((await subscribe(credential, { url: target.url, events: ['grade.changed'] })).status).toBe(201);
  });

  describe('a key rotated out while a request that it authenticated runs (decision 50)', () => {
    /** `name` resolves to loopback only once `release` is called; `reached` tells that a request is waiting on it. */
    function aSlowName(name: string) {
      let reach!: () => void;
      let release!: () => void;
      const reached = new Promise<void>((done) => (reach = done));
      slowNames.set(name, { reached: () => reach(), released: new Promise<void>((done) => (release = done)) });
      dns.set(name, '127.0.0.1');
      return { reached, release };
    }

    /** The organization rotates the grant's key with overlap 0, as the credentials service emits it; resolves once the notifier took it in. */
    async function rotatedWithoutOverlap(record: StoredAuthorization): Promise<string> {
      const apiKey = generateApiKey('rsk');
      const rotatedAt = new Date().toISOString();
      const event = anEvent(
        EVENT_TYPES.authorizationKeyRotated,
        {
          clientId: record.clientId,
          organizationId: ORG,
          keyDigest: digestApiKey(apiKey),
          previousKeyDigest: null,
          previousKeyExpiresAt: null,
          rotatedAt,
          revision: record.revision + 1,
        },
        { time: new Date(rotatedAt) },
      );
      await runtime.eventLog.append(TOPICS.authorizations, [{ key: record.clientId, value: JSON.stringify(event) }]);
      return apiKey;
    }

    const listed = (clientId: string, apiKey: string) =>
      request<{ webhooks: { id: string; status: string; disabledReason: string | null; url: string }[] }>(
        `${app.baseUrl}/v1/customers/${clientId}/webhooks`,
        { headers: { 'x-api-key': apiKey } },
      );

    test('when the target resolves only after the rotation reached the notifier, then the webhook is not kept and the answer is 403 KEY_READ_ONLY', async () => {
      const credential = await anAuthorization();
      const target = await receiver();
      const slow = aSlowName('slow.hooks.test');

      const creating = subscribe(credential, {
        url: `http://slow.hooks.test:${new URL(target.url).port}/hooks`,
        events: ['score.updated'],
      });
      await slow.reached;
      const newKey = await rotatedWithoutOverlap(credential.record);
      slow.release();
      const created = await creating;

      expect([created.status, created.body.code]).toEqual([403, 'KEY_READ_ONLY']);
      expect((await listed(credential.record.clientId, newKey)).body.webhooks).toEqual([]);
    });

    test('when a PATCH that sets a URL and enables the webhook again outlasts the rotation, then 403 KEY_READ_ONLY and the webhook stays disabled', async () => {
      const credential = await anAuthorization();
      const target = await receiver();
      const created = await subscribe(credential, { url: target.url, events: ['score.updated'] });
      const item = `${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks/${created.body.id}`;
      const slow = aSlowName('slow.hooks.test');

      const changing = patch(credential, item, { url: `http://slow.hooks.test:${new URL(target.url).port}/hooks`, enabled: true });
      await slow.reached;
      const newKey = await rotatedWithoutOverlap(credential.record);
      slow.release();
      const changed = await changing;

      expect([changed.status, changed.body.code]).toEqual([403, 'KEY_READ_ONLY']);
      expect((await listed(credential.record.clientId, newKey)).body.webhooks).toEqual([
        expect.objectContaining({ id: created.body.id, status: 'disabled', disabledReason: 'key_ended' }),
      ]);
    });
  });

  describe('without WEBHOOK_ALLOW_PRIVATE_TARGETS (decision 28)', () => {
    beforeEach(async () => {
      await stop();
      await start({});
    });

    test('when the target is http, private or resolves to a private address, then creation is refused', async () => {
      const credential = await anAuthorization();
      dns.set('inside.example', '10.1.2.3');
      dns.set('metadata.example', '169.254.169.254');

      for (const url of [
        'http://hooks.example/x',
        'https://127.0.0.1/x',
        'https://inside.example/x',
        'https://metadata.example/x',
        'https://nowhere.example/x',
      ]) {
        const refused = await subscribe(credential, { url, events: ['score.updated'] });
        expect([url, refused.status, refused.body.code]).toEqual([url, 400, 'WEBHOOK_TARGET_NOT_ALLOWED']);
        expect(refused.body.message).not.toMatch(/10\.1\.2\.3|169\.254/);
      }
    });

    test('when a PATCH moves a webhook to an http, loopback, private or metadata target, then it is refused and the URL stays (decision 45 keeps 28)', async () => {
      const credential = await anAuthorization();
      dns.set('hooks.example', '93.184.216.34');
      dns.set('inside.example', '10.1.2.3');
      const created = await subscribe(credential, { url: 'https://hooks.example/x', events: ['score.updated'] });
      const item = `${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks/${created.body.id}`;

      for (const url of [
        'http://hooks.example/x',
        'https://127.0.0.1/x',
        'https://[::1]/x',
        'https://inside.example/x',
        'https://169.254.169.254/x',
      ]) {
        const refused = await patch(credential, item, { url });
        expect([url, refused.status, refused.body.code]).toEqual([url, 400, 'WEBHOOK_TARGET_NOT_ALLOWED']);
      }
      const listed = await request<{ webhooks: { url: string }[] }>(`${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks`, {
        headers: { 'x-api-key': credential.apiKey },
      });
      expect(listed.body.webhooks.map((webhook) => webhook.url)).toEqual(['https://hooks.example/x']);
    });

    test('when a public name resolves to a private address at delivery (DNS rebinding), then the attempt is refused, not sent', async () => {
      const credential = await anAuthorization();
      dns.set('hooks.example', '93.184.216.34');
      const created = await subscribe(credential, { url: 'https://hooks.example/x', events: ['score.updated'] });
      expect(created.status).toBe(201);

      dns.set('hooks.example', '127.0.0.1');
      await score({ scoreDate: '2026-11-20' });

      const logged = await untilAsync(async () => {
        const answer = await request<{ deliveries: { failure: string; responseCode: number | null }[] }>(
          `${app.baseUrl}/v1/customers/${credential.record.clientId}/webhooks/${created.body.id}/deliveries`,
          { headers: { 'x-api-key': credential.apiKey } },
        );
        return answer.body.deliveries.length > 0 ? answer.body.deliveries : undefined;
      });
      expect(logged[0]).toMatchObject({ failure: 'target_not_allowed', responseCode: null });
    });
  });
});

function untilAsync<T>(check: () => Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  return eventually(
    async () => {
      const value = await check();
      if (value === undefined) throw new Error(`not within ${timeoutMs} ms`);
      return value;
    },
    { timeoutMs, intervalMs: 50 },
  );
}
