import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiConnectionError, ApiError, Client, Organization } from '@resilience-score/client';
import { ALERT_TYPES } from '@rsd/contracts';
import { newWebhookSecret, webhookHeaders } from '@rsd/platform';
import { UsageError } from './score-file';
import { secondsOf } from './cli';
import { runWebhooksCommand, type WebhooksContext, type WebhooksOptions } from './webhooks';

const CLIENT_ID = 'rs_3kTMd9Qx7LwZp2VnB8cY1fRe';
const WEBHOOK_ID = 'wh_7Qm2ZkP9xW4nTcL8vB3dRf6Y';
const API_KEY = 'rsk_test_key';
const WEBHOOK = {
  id: WEBHOOK_ID,
  url: 'https://hooks.example.com/resilience',
  events: ['score.updated'],
  status: 'active',
  createdAt: '2026-11-21T08:00:00.000Z',
};

interface Recorded {
  method: string;
  path: string;
  apiKey: string | undefined;
  body: unknown;
}

/** A stand-in for the notifier: records each request and gives the next canned answer. */
async function fakeNotifier(answers: { status: number; body?: unknown }[]) {
  const requests: Recorded[] = [];
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      requests.push({
        method: request.method ?? '',
        path: request.url ?? '',
        apiKey: request.headers['x-api-key'] as string | undefined,
        body: text ? JSON.parse(text) : undefined,
      });
      const answer = answers.shift() ?? { status: 500, body: { status: 500, message: 'no answer left' } };
      if (answer.body === undefined) response.writeHead(answer.status).end();
      else response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** The SDK's webhooks of a grant on `notifierUrl`, sent once (the retries are the SDK's own business). */
function context({ notifierUrl = 'http://127.0.0.1:9', ...overrides }: Partial<WebhooksContext> & { notifierUrl?: string } = {}) {
  const out: string[] = [];
  const notes: string[] = [];
  const value: WebhooksContext = {
    webhooksOf: (clientId) =>
      new Client({ clientId, apiKey: API_KEY, baseUrl: notifierUrl, notifierUrl: `${notifierUrl}/v1`, maxRetries: 0 }).webhooks,
    env: {},
    untilStopped: () => new Promise(() => undefined),
    out: (line) => out.push(line),
    note: (line) => notes.push(line),
    secondsOf,
    ...overrides,
  };
  return { context: value, out, notes };
}

describe('rsd webhooks create, list, deliveries and delete', () => {
  test('when create is called, then it posts the url and events with the API key and returns the created subscription', async () => {
    const created = { ...WEBHOOK, events: ['score.updated', 'grade.changed'], secret: newWebhookSecret() };
    const notifier = await fakeNotifier([{ status: 201, body: created }]);
    const { context: ctx, notes } = context({ notifierUrl: notifier.url });

    const result = await runWebhooksCommand(
      'create',
      { 'client-id': CLIENT_ID, url: WEBHOOK.url, events: 'score.updated, grade.changed' },
      ctx,
    );

    expect(result).toEqual(created);
    expect(notifier.requests).toEqual([
      {
        method: 'POST',
        path: `/v1/customers/${CLIENT_ID}/webhooks`,
        apiKey: API_KEY,
        body: { url: WEBHOOK.url, events: ['score.updated', 'grade.changed'] },
      },
    ]);
    expect(notes).toEqual([expect.stringContaining('shown only this once')]);
  });

  test('when list is called, then it gets the client’s webhooks', async () => {
    const notifier = await fakeNotifier([{ status: 200, body: { webhooks: [WEBHOOK] } }]);

    const result = await runWebhooksCommand('list', { 'client-id': CLIENT_ID }, context({ notifierUrl: notifier.url }).context);

    expect(result).toEqual({ webhooks: [WEBHOOK] });
    expect(notifier.requests).toEqual([{ method: 'GET', path: `/v1/customers/${CLIENT_ID}/webhooks`, apiKey: API_KEY, body: undefined }]);
  });

  test('when list finds disabled webhooks, then each is printed with its disabledReason and a note says why and how it comes back', async () => {
    const disabled = [
      { ...WEBHOOK, id: 'wh_0000000000000000keyended', status: 'disabled', disabledReason: 'key_ended' },
      { ...WEBHOOK, id: 'wh_00000000000000keyleaked', status: 'disabled', disabledReason: 'key_leaked' },
      { ...WEBHOOK, id: 'wh_000000000000000failures', status: 'disabled', disabledReason: 'delivery_failures' },
    ];
    const notifier = await fakeNotifier([{ status: 200, body: { webhooks: [WEBHOOK, ...disabled] } }]);
    const { context: ctx, notes } = context({ notifierUrl: notifier.url });

    const result = await runWebhooksCommand('list', { 'client-id': CLIENT_ID }, ctx);

    expect(result).toEqual({ webhooks: [WEBHOOK, ...disabled] });
    expect(notes).toEqual([
      expect.stringMatching(
        /keyended is disabled \(key_ended\).*rsd webhooks enable --client-id … --id wh_0000000000000000keyended --url URL/,
      ),
      expect.stringMatching(/keyleaked is disabled \(key_leaked\).*--url URL/),
      expect.stringMatching(
        /failures is disabled \(delivery_failures\).*rsd webhooks enable --client-id … --id wh_000000000000000failures once/,
      ),
    ]);
  });

  test('when deliveries is called, then it gets the attempts of that webhook', async () => {
    const notifier = await fakeNotifier([{ status: 200, body: { deliveries: [] } }]);

    const result = await runWebhooksCommand(
      'deliveries',
      { 'client-id': CLIENT_ID, id: WEBHOOK_ID },
      context({ notifierUrl: notifier.url }).context,
    );

    expect(result).toEqual({ deliveries: [] });
    expect(notifier.requests[0]).toEqual(
      expect.objectContaining({ method: 'GET', path: `/v1/customers/${CLIENT_ID}/webhooks/${WEBHOOK_ID}/deliveries` }),
    );
  });

  test('when delete is answered 204, then nothing is printed on stdout and a note says it is deleted', async () => {
    const notifier = await fakeNotifier([{ status: 204 }]);
    const { context: ctx, notes } = context({ notifierUrl: notifier.url });

    const result = await runWebhooksCommand('delete', { 'client-id': CLIENT_ID, id: WEBHOOK_ID }, ctx);

    expect(result).toBeUndefined();
    expect(notifier.requests).toEqual([
      { method: 'DELETE', path: `/v1/customers/${CLIENT_ID}/webhooks/${WEBHOOK_ID}`, apiKey: API_KEY, body: undefined },
    ]);
    expect(notes).toEqual([`rsd: webhook ${WEBHOOK_ID} deleted`]);
  });

  test('when an id holds characters that mean something in a path, then they are encoded', async () => {
    const notifier = await fakeNotifier([{ status: 204 }]);

    await runWebhooksCommand('delete', { 'client-id': 'a/b', id: '../x?y' }, context({ notifierUrl: notifier.url }).context);

    expect(notifier.requests[0]?.path).toBe('/v1/customers/a%2Fb/webhooks/..%2Fx%3Fy');
  });

  test('when the notifier refuses, then the error carries its status and code (exit 1)', async () => {
    const refusal = { status: 404, code: 'NOT_FOUND', message: 'No such webhook', requestId: 'req_1' };
    const notifier = await fakeNotifier([{ status: 404, body: refusal }]);

    const failure = runWebhooksCommand(
      'delete',
      { 'client-id': CLIENT_ID, id: WEBHOOK_ID },
      context({ notifierUrl: notifier.url }).context,
    );

    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(failure).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND', message: 'No such webhook' });
  });

  test('when the notifier cannot be reached, then the error says so and is not a usage error (exit 1)', async () => {
    const notifier = await fakeNotifier([]);
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));

    const failure = runWebhooksCommand('list', { 'client-id': CLIENT_ID }, context({ notifierUrl: notifier.url }).context);

    await expect(failure).rejects.toBeInstanceOf(ApiConnectionError);
    await expect(failure).rejects.toThrow(/^GET http:\/\/127\.0\.0\.1:\d+\/v1\/customers\/.+\/webhooks: /);
    await expect(failure).rejects.not.toBeInstanceOf(UsageError);
  });
});

describe('rsd webhooks update, pause, enable, rotate-secret, test and redeliver', () => {
  const path = `/v1/customers/${CLIENT_ID}/webhooks/${WEBHOOK_ID}`;

  test('when create is given conditions, then they are sent with the url and events', async () => {
    const notifier = await fakeNotifier([{ status: 201, body: { ...WEBHOOK, secret: newWebhookSecret() } }]);

    await runWebhooksCommand(
      'create',
      { 'client-id': CLIENT_ID, url: WEBHOOK.url, events: 'score.updated', 'score-below': '60', 'grade-changed': true },
      context({ notifierUrl: notifier.url }).context,
    );

    expect(notifier.requests[0]?.body).toEqual({
      url: WEBHOOK.url,
      events: ['score.updated'],
      conditions: { scoreBelow: 60, gradeChanged: true },
    });
  });

  test.each<[string, WebhooksOptions, unknown]>([
    [
      'a url and events',
      { url: 'https://hooks.example.com/new', events: 'grade.changed' },
      { url: 'https://hooks.example.com/new', events: ['grade.changed'] },
    ],
    ['--enabled false', { enabled: 'false' }, { enabled: false }],
    ['conditions', { 'score-below': '50', 'score-drop-at-least': '10' }, { conditions: { scoreBelow: 50, scoreDropAtLeast: 10 } }],
    ['--every-change', { 'every-change': true }, { conditions: {} }],
  ])('when update is given %s, then only that is sent, as a PATCH, and the webhook is printed', async (_case, options, body) => {
    const notifier = await fakeNotifier([{ status: 200, body: WEBHOOK }]);

    const result = await runWebhooksCommand(
      'update',
      { 'client-id': CLIENT_ID, id: WEBHOOK_ID, ...options },
      context({ notifierUrl: notifier.url }).context,
    );

    expect(result).toEqual(WEBHOOK);
    expect(notifier.requests).toEqual([{ method: 'PATCH', path, apiKey: API_KEY, body }]);
  });

  test.each([
    ['pause', false, /paused/],
    ['enable', true, /enabled: deliveries resume from now/],
  ])('when %s is called, then enabled is set to %s and a note says what it means', async (subcommand, enabled, note) => {
    const notifier = await fakeNotifier([{ status: 200, body: { ...WEBHOOK, status: enabled ? 'active' : 'paused' } }]);
    const { context: ctx, notes } = context({ notifierUrl: notifier.url });

    const result = await runWebhooksCommand(subcommand, { 'client-id': CLIENT_ID, id: WEBHOOK_ID }, ctx);

    expect(result).toMatchObject({ status: enabled ? 'active' : 'paused' });
    expect(notifier.requests).toEqual([{ method: 'PATCH', path, apiKey: API_KEY, body: { enabled } }]);
    expect(notes[0]).toMatch(note);
  });

  test('when enable is given --url, then the URL is set again with enabled true: how a webhook disabled for its key comes back', async () => {
    const url = 'https://hooks.example.com/again';
    const notifier = await fakeNotifier([{ status: 200, body: { ...WEBHOOK, url, status: 'active', disabledReason: null } }]);

    await runWebhooksCommand('enable', { 'client-id': CLIENT_ID, id: WEBHOOK_ID, url }, context({ notifierUrl: notifier.url }).context);

    expect(notifier.requests).toEqual([{ method: 'PATCH', path, apiKey: API_KEY, body: { enabled: true, url } }]);
  });

  test.each<[string, WebhooksOptions, number]>([
    ['no overlap given: a day', {}, 86_400],
    ['--overlap 1h', { overlap: '1h' }, 3_600],
    ['--overlap-seconds 90', { 'overlap-seconds': '90' }, 90],
    ['--overlap 0', { overlap: '0' }, 0],
  ])(
    'when rotate-secret is called with %s, then that overlap is sent and the new secret printed once',
    async (_case, options, overlapSeconds) => {
      const secret = newWebhookSecret();
      const notifier = await fakeNotifier([{ status: 201, body: { secret } }]);
      const { context: ctx, notes } = context({ notifierUrl: notifier.url });

      const result = await runWebhooksCommand('rotate-secret', { 'client-id': CLIENT_ID, id: WEBHOOK_ID, ...options }, ctx);

      expect(result).toEqual({ secret });
      expect(notifier.requests).toEqual([{ method: 'POST', path: `${path}/rotate-secret`, apiKey: API_KEY, body: { overlapSeconds } }]);
      expect(notes[0]).toContain('shown only this once');
      expect(notes.join('\n')).not.toContain(secret);
    },
  );

  test('when test is called, then a test delivery is asked for and its messageId printed', async () => {
    const notifier = await fakeNotifier([{ status: 202, body: { messageId: 'msg_2KWPBgLlAfxdpx2AI54pPJ85' } }]);

    const result = await runWebhooksCommand(
      'test',
      { 'client-id': CLIENT_ID, id: WEBHOOK_ID },
      context({ notifierUrl: notifier.url }).context,
    );

    expect(result).toEqual({ messageId: 'msg_2KWPBgLlAfxdpx2AI54pPJ85' });
    expect(notifier.requests).toEqual([{ method: 'POST', path: `${path}/test`, apiKey: API_KEY, body: undefined }]);
  });

  test('when redeliver is called with a message id, then that delivery is asked for again', async () => {
    const notifier = await fakeNotifier([{ status: 202, body: { messageId: 'msg_2KWPBgLlAfxdpx2AI54pPJ85' } }]);

    const result = await runWebhooksCommand(
      'redeliver',
      { 'client-id': CLIENT_ID, id: WEBHOOK_ID, 'message-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85' },
      context({ notifierUrl: notifier.url }).context,
    );

    expect(result).toEqual({ messageId: 'msg_2KWPBgLlAfxdpx2AI54pPJ85' });
    expect(notifier.requests[0]).toMatchObject({ method: 'POST', path: `${path}/deliveries/msg_2KWPBgLlAfxdpx2AI54pPJ85/redeliver` });
  });

  test('when the webhook is unknown, then the notifier’s refusal is the SDK’s error with its code (exit 1)', async () => {
    const refusal = { status: 404, code: 'WEBHOOK_NOT_FOUND', message: 'No such webhook', requestId: 'req_1' };
    const notifier = await fakeNotifier([{ status: 404, body: refusal }]);

    const failure = runWebhooksCommand('pause', { 'client-id': CLIENT_ID, id: WEBHOOK_ID }, context({ notifierUrl: notifier.url }).context);

    await expect(failure).rejects.toMatchObject({ status: 404, code: 'WEBHOOK_NOT_FOUND' });
    await expect(failure).rejects.not.toBeInstanceOf(UsageError);
  });
});

describe("rsd alert-webhooks: an organization's", () => {
  /** The SDK's alert webhooks of the organization `org`, on `notifierUrl`, with its token. */
  const organizationOwner = (notifierUrl: string) => ({
    webhooksOf: (org: string) =>
      new Organization({ token: 'jwt-org', organizationId: org, notifierUrl: `${notifierUrl}/v1`, maxRetries: 0 }).webhooks,
    owner: { option: 'org' as const, events: ALERT_TYPES },
  });

  test('when create is called, then it posts to the organization’s webhooks with its token', async () => {
    const created = { ...WEBHOOK, events: ['authorization.first_use'], secret: newWebhookSecret() };
    const notifier = await fakeNotifier([{ status: 201, body: created }]);

    const result = await runWebhooksCommand(
      'create',
      { org: 'acme', url: WEBHOOK.url, events: 'authorization.first_use,authorization.key_leaked' },
      context({ notifierUrl: notifier.url, ...organizationOwner(notifier.url) }).context,
    );

    expect(result).toEqual(created);
    expect(notifier.requests).toEqual([
      {
        method: 'POST',
        path: '/v1/organizations/acme/webhooks',
        apiKey: undefined,
        body: { url: WEBHOOK.url, events: ['authorization.first_use', 'authorization.key_leaked'] },
      },
    ]);
  });

  test('when a recipient’s event is asked for, then it is a usage error that names the alert events', async () => {
    const notifier = await fakeNotifier([]);

    const failure = runWebhooksCommand(
      'create',
      { org: 'acme', url: WEBHOOK.url, events: 'score.updated' },
      context({ notifierUrl: notifier.url, ...organizationOwner(notifier.url) }).context,
    );

    await expect(failure).rejects.toBeInstanceOf(UsageError);
    await expect(failure).rejects.toThrow(/^--events: no event "score\.updated"; the events are authorization\.expiring, /);
    expect(notifier.requests).toEqual([]);
  });

  test('when --org is missing, then it is named', async () => {
    const failure = runWebhooksCommand('list', {}, context(organizationOwner('http://127.0.0.1:9')).context);

    await expect(failure).rejects.toThrow(/^--org is required$/);
  });
});

describe('rsd webhooks argument handling (exit 2)', () => {
  test.each<[string, string, WebhooksOptions, RegExp]>([
    ['create without --client-id', 'create', { url: WEBHOOK.url, events: 'score.updated' }, /^--client-id is required$/],
    ['create without --url', 'create', { 'client-id': CLIENT_ID, events: 'score.updated' }, /^--url is required$/],
    ['create without --events', 'create', { 'client-id': CLIENT_ID, url: WEBHOOK.url }, /^--events is required$/],
    [
      'create with an unknown event',
      'create',
      { 'client-id': CLIENT_ID, url: WEBHOOK.url, events: 'score.updated,score.deleted' },
      /^--events: no event "score\.deleted"; the events are score\.updated, grade\.changed, authorization\.ended$/,
    ],
    ['create with only commas as events', 'create', { 'client-id': CLIENT_ID, url: WEBHOOK.url, events: ',' }, /^--events: none given/],
    [
      'create with a repeated event',
      'create',
      { 'client-id': CLIENT_ID, url: WEBHOOK.url, events: 'grade.changed,grade.changed' },
      /^--events: must not repeat an event type$/,
    ],
    ['list without --client-id', 'list', {}, /^--client-id is required$/],
    ['delete without --id', 'delete', { 'client-id': CLIENT_ID }, /^--id is required$/],
    ['deliveries without --id', 'deliveries', { 'client-id': CLIENT_ID }, /^--id is required$/],
    ['listen without --port', 'listen', { secret: newWebhookSecret() }, /^--port is required$/],
    ['listen with a port that is not a number', 'listen', { port: '80a', secret: newWebhookSecret() }, /^--port must be a whole number/],
    [
      'listen with a port above 65535',
      'listen',
      { port: '65536', secret: newWebhookSecret() },
      /^--port must be a whole number from 0 to 65535/,
    ],
    ['listen with a negative --fail', 'listen', { port: '0', fail: '-1', secret: newWebhookSecret() }, /^--fail must be a whole number/],
    ['listen without a secret', 'listen', { port: '0' }, /^no webhook secret: set RSD_WEBHOOK_SECRET \(or pass --secret\)$/],
    ['listen with a secret that is not one', 'listen', { port: '0', secret: 'whsec_nope' }, /^not a webhook secret/],
    ['an unknown subcommand', 'rename', {}, /^unknown command: webhooks rename$/],
    ['update with nothing to change', 'update', { 'client-id': CLIENT_ID, id: WEBHOOK_ID }, /^update needs at least one of --url/],
    ['update with --enabled yes', 'update', { 'client-id': CLIENT_ID, id: WEBHOOK_ID, enabled: 'yes' }, /^--enabled must be true or false/],
    ['update with a score of 0', 'update', { 'client-id': CLIENT_ID, id: WEBHOOK_ID, 'score-below': '0' }, /^--score-below: /],
    [
      'update with a score over 100',
      'update',
      { 'client-id': CLIENT_ID, id: WEBHOOK_ID, 'score-drop-at-least': '101' },
      /^--score-drop-at-least: /,
    ],
    [
      'update with --every-change and a condition',
      'update',
      { 'client-id': CLIENT_ID, id: WEBHOOK_ID, 'every-change': true, 'grade-changed': true },
      /^--every-change removes the conditions/,
    ],
    [
      'create with --every-change',
      'create',
      { 'client-id': CLIENT_ID, url: WEBHOOK.url, events: 'score.updated', 'every-change': true },
      /^--every-change is for update/,
    ],
    [
      'rotate-secret over a day',
      'rotate-secret',
      { 'client-id': CLIENT_ID, id: WEBHOOK_ID, overlap: '2d' },
      /^the overlap is at most 86400 s/,
    ],
    [
      'rotate-secret with both overlaps',
      'rotate-secret',
      { 'client-id': CLIENT_ID, id: WEBHOOK_ID, overlap: '1h', 'overlap-seconds': '60' },
      /^--overlap and --overlap-seconds/,
    ],
    [
      'rotate-secret with an overlap that is no duration',
      'rotate-secret',
      { 'client-id': CLIENT_ID, id: WEBHOOK_ID, overlap: 'soon' },
      /^--overlap must be/,
    ],
    ['redeliver without a message id', 'redeliver', { 'client-id': CLIENT_ID, id: WEBHOOK_ID }, /^--message-id is required$/],
  ])('when %s, then it is a usage error and nothing is sent', async (_case, subcommand, options, message) => {
    const notifier = await fakeNotifier([]);

    const failure = runWebhooksCommand(subcommand, options, context({ notifierUrl: notifier.url }).context);

    await expect(failure).rejects.toBeInstanceOf(UsageError);
    await expect(failure).rejects.toThrow(message);
    expect(notifier.requests).toEqual([]);
  });
});

describe('rsd webhooks listen', () => {
  /** Runs `listen` until `stop` is called; resolves the URL it announced. */
  async function listen(options: WebhooksOptions, env: Record<string, string> = {}) {
    let stop: () => void = () => undefined;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const { context: ctx, out, notes } = context({ env, untilStopped: () => stopped });
    const running = runWebhooksCommand('listen', { port: '0', ...options }, ctx);
    await new Promise<void>((resolve, reject) => {
      const waiting = setInterval(() => notes.length > 0 && (clearInterval(waiting), resolve()), 5);
      running.catch((error: unknown) => (clearInterval(waiting), reject(error as Error)));
    });
    const url = /http:\/\/\S+\//.exec(notes[0] ?? '')?.[0] ?? '';
    return { url, out, notes, running, stop };
  }

  async function post(url: string, secret: string) {
    const body = JSON.stringify({ type: 'authorization.ended', timestamp: '2026-11-21T08:00:00.000Z', data: {} });
    const headers = webhookHeaders({ id: 'msg_2KWPBgLlAfxdpx2AI54pPJ85', timestamp: Math.floor(Date.now() / 1000), body, secret });
    return (await fetch(url, { method: 'POST', headers, body })).status;
  }

  test('when RSD_WEBHOOK_SECRET is set, then deliveries verify with it and each is printed as one JSON line', async () => {
    const secret = newWebhookSecret();
    const listener = await listen({}, { RSD_WEBHOOK_SECRET: secret });

    const status = await post(listener.url, secret);
    listener.stop();

    expect(status).toBe(204);
    await expect(listener.running).resolves.toBeUndefined();
    expect(listener.out).toHaveLength(1);
    expect(JSON.parse(listener.out[0]!)).toEqual(
      expect.objectContaining({ verified: true, id: 'msg_2KWPBgLlAfxdpx2AI54pPJ85', type: 'authorization.ended' }),
    );
    expect(listener.notes[0]).toMatch(/^rsd: listening for webhooks on http:\/\/127\.0\.0\.1:\d+\//);
  });

  test('when --secret is given, then it is the one deliveries are verified with', async () => {
    const secret = newWebhookSecret();
    const listener = await listen({ secret }, { RSD_WEBHOOK_SECRET: newWebhookSecret() });

    const status = await post(listener.url, secret);
    listener.stop();
    await listener.running;

    expect(status).toBe(204);
  });

  test('when --fail 1 is given, then the first delivery is answered 500 and the note says so', async () => {
    const secret = newWebhookSecret();
    const listener = await listen({ secret, fail: '1' });

    const statuses = [await post(listener.url, secret), await post(listener.url, secret)];
    listener.stop();
    await listener.running;

    expect(statuses).toEqual([500, 204]);
    expect(listener.notes[0]).toContain('the first delivery answered 500');
  });

  test('when it is stopped, then the port is closed', async () => {
    const listener = await listen({ secret: newWebhookSecret() });

    listener.stop();
    await listener.running;

    await expect(fetch(listener.url, { method: 'POST' })).rejects.toThrow();
  });

  test('when the port is taken, then it fails without being a usage error (exit 1)', async () => {
    const taken = await fakeNotifier([]);
    const port = new URL(taken.url).port;

    const failure = runWebhooksCommand('listen', { port, secret: newWebhookSecret() }, context().context);

    await expect(failure).rejects.toThrow(`cannot listen on 127.0.0.1:${port}`);
    await expect(failure).rejects.not.toBeInstanceOf(UsageError);
  });
});
