import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readDevSecret, signDevToken } from '@rsd/platform';
import { aScoreSubmission, request } from '@rsd/testkit';
import { everyAnswerDocumented, type Answer } from './documented-answers.js';
import { eventually, REPO_ROOT, startEmbedded, type EmbeddedProcess } from '../../../test/support/embedded-process.js';
import { TEST_RESPONSE_SIGNING_KEYS, TEST_SUBJECT_KEYS_MASTER_KEY } from '../../../test/support/service-process.js';
import * as sdk from '@resilience-score/client';
import {
  ApiError,
  Client,
  CredentialInactive,
  EdgeBlocked,
  RateLimited,
  ResilienceScoreError,
  ScoreNotFound,
  ServiceUnavailable,
  SignatureError,
  verifyCertificate,
  verifyEvidence,
  verifyWebhook,
  type ClientOptions,
  type Evidence,
  type Jwks,
  type WebhookPayload,
} from '@resilience-score/client';

/**
 * The TypeScript SDK against the real product, `npm start` on ephemeral loopback ports: every resource,
 * history pages, conditional requests, every refusal it can be made to give, a webhook delivery, and
 * evidence checked again offline. A small rate limit, and a proxy hop trusted so that an address in a
 * denied range can be presented.
 */
const ORG = 'sdk-org';
const EMPTY_ORG = 'sdk-empty-org';
const WEBHOOK_ORG = 'sdk-webhook-org';
const RATE_LIMIT = 40;
const DENIED_ADDRESS = '203.0.113.9';
const SCORE_DATES = [10, 9, 8, 7, 6].map((n) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10));

let dataDir: string;
let product: EmbeddedProcess;
let secret: string;
/** Every answer of the read API and the notifier in this run, held against their OpenAPI documents at the end. */
const answered: Answer[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rsd-sdk-ts-'));
  product = await startEmbedded({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    TRUST_PROXY_HOPS: '1',
    EDGE_DENY_CIDRS: '203.0.113.0/24',
    // Webhook receivers on loopback: decision 28's development flag.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });
  secret = (await readDevSecret(dataDir))!;
  const send = globalThis.fetch;
  jest.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const response = await send(input, init);
    const url = new URL(input instanceof Request ? input.url : input);
    if ([product.urls.readApi, product.urls.notifier].includes(url.origin)) {
      const json = response.headers.get('content-type')?.includes('json') ? await response.clone().json() : undefined;
      answered.push({ url, method: init?.method ?? 'GET', status: response.status, body: json });
    }
    return response;
  });
  await postScores(
    ORG,
    SCORE_DATES.map((scoreDate, i) => ({ scoreDate, score: 50 + i * 5 })),
  );
}, 90_000);

afterAll(async () => {
  jest.restoreAllMocks();
  await product?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const tokenFor = (org: string) => signDevToken(secret, { org, scope: 'authorizations:write scores:write' });

/** A new authorization, once the read API knows it (its projection follows the event log). */
async function createAuthorization(scopes: string[], org = ORG, extra: object = {}): Promise<{ clientId: string; apiKey: string }> {
  const created = await request<{ clientId: string; apiKey: string }>(
    `${product.urls.credentials}/v1/organizations/${org}/authorizations`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${await tokenFor(org)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipientType: 'insurance_provider', scopes, ...extra }),
    },
  );
  expect(created.status).toBe(201);
  const { clientId, apiKey } = created.body;
  await eventually(async () => {
    const read = await request(`${product.urls.readApi}/v1/customers/${clientId}/score`, { headers: { 'x-api-key': apiKey } });
    return read.body?.code === 'CREDENTIAL_NOT_FOUND' ? undefined : true;
  });
  return { clientId, apiKey };
}

async function postScores(org: string, scores: { scoreDate: string; score: number }[]): Promise<void> {
  const posted = await request(`${product.urls.scoreIngest}/v1/scores`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await tokenFor(org)}`, 'content-type': 'application/json' },
    body: JSON.stringify({ scores: scores.map((score) => aScoreSubmission({ organizationId: org, ...score })) }),
  });
  expect(posted.status).toBe(202);
}

const clientFor = (credential: { clientId: string; apiKey: string }, options: Partial<ClientOptions> = {}) =>
  new Client({ ...credential, baseUrl: `${product.urls.readApi}/v1`, notifierUrl: `${product.urls.notifier}/v1`, ...options });

/** What the call was refused with; undefined when it succeeded. */
const refusalOf = (call: Promise<unknown>): Promise<unknown> =>
  call.then(
    () => undefined,
    (error: unknown) => error,
  );

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const collected: T[] = [];
  for await (const item of items) collected.push(item);
  return collected;
}

describe('the TypeScript SDK on the embedded runtime', () => {
  let credential: { clientId: string; apiKey: string };
  let client: Client;

  beforeAll(async () => {
    // The ingest's events reach the read API a moment later: wait for the latest date, with another credential's quota.
    const probe = await createAuthorization(['qr_score']);
    await eventually(async () => {
      const read = await request(`${product.urls.readApi}/v1/customers/${probe.clientId}/score`, {
        headers: { 'x-api-key': probe.apiKey },
      });
      return read.body?.scoreDate === SCORE_DATES[4] ? true : undefined;
    });
    credential = await createAuthorization(['qr_score', 'pillar_breakdown', 'score_trend']);
    client = clientFor(credential);
  });

  test('when the score and the pillars are read, then the fields are the latest snapshot and each carries verified evidence', async () => {
    const score = await client.score();
    const pillars = await client.pillars();

    expect(score).toMatchObject({
      clientId: credential.clientId,
      scoreDate: SCORE_DATES[4],
      score: 70,
      grade: 'Strengthen',
      notModified: false,
    });
    expect(pillars).toMatchObject({ clientId: credential.clientId, scoreDate: SCORE_DATES[4], notModified: false });
    expect(Object.keys(pillars.pillarScores).sort()).toEqual([
      'deviceHealth',
      'failureResistance',
      'recoveryCapability',
      'structuralIntegrity',
    ]);
    expect(score.evidence).toMatchObject({ status: 200, path: `/v1/customers/${credential.clientId}/score` });
    expect(JSON.parse(Buffer.from(score.evidence.body).toString('utf8'))).toEqual({
      clientId: credential.clientId,
      scoreDate: SCORE_DATES[4],
      score: 70,
      grade: 'Strengthen',
    });
    expect(score.evidence.headers['signature-input']).toMatch(/^sig1=\("@status" "content-type" "content-digest" "@path";req\)/);
  });

  test('when the score is read again, then the API answers 304 and the client returns what it kept, marked not modified', async () => {
    const fresh = clientFor(credential);
    const first = await fresh.score();

    const again = await fresh.score();

    expect(again.notModified).toBe(true);
    expect(again.evidence).toBe(first.evidence);
    expect({ ...again, notModified: false }).toEqual(first);
  });

  test("when a certificate is asked for on a date, then it holds that date's score, its JWS verified, and verifies again offline; before any score it is ScoreNotFound", async () => {
    const onDate = await client.certificate(SCORE_DATES[2]);
    const keySet = await client.signingKeys();

    expect(onDate.certificate).toMatchObject({
      recipient: { clientId: credential.clientId, type: 'insurance_provider' },
      score: 60,
      scoreDate: SCORE_DATES[2],
      asOf: SCORE_DATES[2],
      pillarScores: expect.any(Object),
    });
    expect(verifyCertificate(onDate.jws, keySet)).toEqual({ certificate: onDate.certificate, kid: keySet.keys[0]?.kid });
    const dayBefore = new Date(Date.parse(SCORE_DATES[0]!) - 86_400_000).toISOString().slice(0, 10);
    expect(await refusalOf(client.certificate(dayBefore))).toBeInstanceOf(ScoreNotFound);
  });

  test('when the history is iterated two dates a page, then every snapshot comes, newest first, across three pages', async () => {
    const items = await all(client.history({ limit: 2 }));

    expect(items.map((item) => item.scoreDate)).toEqual([...SCORE_DATES].reverse());
    expect(items.map((item) => item.change?.score ?? null)).toEqual([5, 5, 5, 5, null]);
    expect(items[0]?.pillarScores).toBeDefined();
    expect(new Set(items.map((item) => item.evidence)).size).toBe(3);
    expect(items.every((item) => !item.notModified)).toBe(true);
  });

  test('when the history is iterated again, then every page comes from what the client kept', async () => {
    const fresh = clientFor(credential);
    const before = await all(fresh.history({ limit: 2 }));

    const again = await all(fresh.history({ limit: 2 }));

    expect(again.every((item) => item.notModified)).toBe(true);
    expect(again.map((item) => item.scoreDate)).toEqual(before.map((item) => item.scoreDate));
  });

  test('when the history is bounded by from and to, then only those dates come', async () => {
    const items = await all(client.history({ from: SCORE_DATES[1], to: SCORE_DATES[3], limit: 1 }));

    expect(items.map((item) => item.scoreDate)).toEqual([SCORE_DATES[3], SCORE_DATES[2], SCORE_DATES[1]]);
  });

  describe('evidence checked again later, offline, with verifyEvidence', () => {
    let evidence: Evidence;
    let jwks: Jwks;

    beforeAll(async () => {
      evidence = (await clientFor(credential).score()).evidence;
      jwks = (await request<Jwks>(`${product.urls.readApi}/.well-known/jwks.json`)).body;
    });

    test('when the client is asked for its signing keys, then they are the JWKS as published (getSigningKeys)', async () => {
      expect(await clientFor(credential).signingKeys()).toEqual(jwks);
    });

    test('when the evidence is as received, then it verifies with the published key', () => {
      expect(verifyEvidence(evidence, jwks)).toEqual({ kid: jwks.keys[0]!.kid, created: expect.any(Date) });
    });

    test.each<[string, (original: Evidence) => Evidence, string]>([
      [
        'the body',
        (original) => ({
          ...original,
          body: Buffer.from(
            Buffer.from(original.body)
              .toString('utf8')
              .replace(/"score":\d+/, '"score":99'),
          ),
        }),
        'the body does not match its Content-Digest',
      ],
      ['the status', (original) => ({ ...original, status: 203 }), 'the signature does not match the response'],
      [
        'the path',
        (original) => ({ ...original, path: original.path.replace('/score', '/pillars') }),
        'the signature does not match the response',
      ],
    ])('when %s was altered, then SignatureError', (_part, alter, reason) => {
      expect(() => verifyEvidence(alter(evidence), jwks)).toThrow(new SignatureError(reason));
    });

    test('when the body and its digest were both replaced, then SignatureError', () => {
      const body = Buffer.from('{"score":99}');
      const digest = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;

      expect(() => verifyEvidence({ ...evidence, body, headers: { ...evidence.headers, 'content-digest': digest } }, jwks)).toThrow(
        new SignatureError('the signature does not match the response'),
      );
    });
  });

  describe('through a proxy', () => {
    let proxy: Server;
    let forwardedFor: string | undefined;
    let alterBody: (body: string) => string;

    beforeAll(async () => {
      proxy = createServer((req, res) => {
        void (async () => {
          const headers: Record<string, string> = {};
          for (const name of ['x-api-key', 'if-none-match', 'accept'] as const) {
            const value = req.headers[name];
            if (typeof value === 'string') headers[name] = value;
          }
          if (forwardedFor) headers['x-forwarded-for'] = forwardedFor;
          const upstream = await fetch(`${product.urls.readApi}${req.url}`, { headers });
          const passed: Record<string, string> = {};
          upstream.headers.forEach((value, name) => {
            if (!['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name)) passed[name] = value;
          });
          res.writeHead(upstream.status, passed).end(alterBody(await upstream.text()));
        })();
      });
      await new Promise<void>((listening) => proxy.listen(0, '127.0.0.1', listening));
    });

    afterAll(() => new Promise<void>((closed) => proxy.close(() => closed())));

    const viaProxy = (options: Partial<ClientOptions> = {}) =>
      clientFor(credential, { baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`, ...options });

    test('when a body is altered on the way, then the client throws SignatureError and returns nothing; unverified, it would have', async () => {
      forwardedFor = undefined;
      alterBody = (body) => body.replace(/"score":\d+/, '"score":99');

      await expect(viaProxy().score()).rejects.toThrow(new SignatureError('the body does not match its Content-Digest'));
      await expect(viaProxy({ verifySignatures: false }).score()).resolves.toMatchObject({ score: 99 });
    });

    test('when the request comes from an address the edge policy denies, then EdgeBlocked', async () => {
      forwardedFor = DENIED_ADDRESS;
      alterBody = (body) => body;

      const refusal = viaProxy().score();

      await expect(refusal).rejects.toBeInstanceOf(EdgeBlocked);
      await expect(refusal).rejects.toMatchObject({ status: 403, code: undefined, requestId: expect.any(String) });
      await expect(viaProxy().signingKeys()).rejects.toBeInstanceOf(EdgeBlocked);
    });
  });
});

describe('every refusal, as its error class', () => {
  /** Each error class's status and code, stated once for both SDKs' tests (decision 37). */
  const { classes } = JSON.parse(readFileSync(join(REPO_ROOT, 'sdks/conformance/error-classes.json'), 'utf8')) as {
    classes: Record<string, { status: number; code: string | null }>;
  };
  /** The refusal is the SDK's class of that name, with that class's status and code. */
  const expectRefused = (error: unknown, className: string) => {
    const { status, code } = classes[className]!;
    expect(error).toBeInstanceOf((sdk as Record<string, unknown>)[className]);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(ResilienceScoreError);
    expect(error).toMatchObject({ status, code: code ?? undefined, message: expect.any(String), requestId: expect.any(String) });
  };
  const expectRefusal = async (call: Promise<unknown>, className: string) => expectRefused(await refusalOf(call), className);

  test('when the Client ID is not in the expected format, then InvalidClientId', async () => {
    await expectRefusal(clientFor({ clientId: 'not-a-client-id', apiKey: 'rsk_x' }).score(), 'InvalidClientId');
  });

  test('when no API key is given, then MissingApiKey', async () => {
    const { clientId } = await createAuthorization(['qr_score']);

    await expectRefusal(clientFor({ clientId, apiKey: '' }).score(), 'MissingApiKey');
  });

  test('when no credential has the Client ID, then CredentialNotFound', async () => {
    await expectRefusal(clientFor({ clientId: `rs_${'Q'.repeat(24)}`, apiKey: 'rsk_x' }).score(), 'CredentialNotFound');
  });

  test('when the key is wrong, then InvalidApiKey', async () => {
    const { clientId } = await createAuthorization(['qr_score']);
    const { apiKey } = await createAuthorization(['qr_score']);

    await expectRefusal(clientFor({ clientId, apiKey }).score(), 'InvalidApiKey');
  });

  test('when the authorization was revoked, then CredentialInactive', async () => {
    const credential = await createAuthorization(['qr_score']);
    const revoked = await request(`${product.urls.credentials}/v1/organizations/${ORG}/authorizations/${credential.clientId}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await tokenFor(ORG)}` },
    });
    expect(revoked.status).toBe(200);
    // Enforced within a second of the answer (decision 29).
    await eventually(async () => ((await refusalOf(clientFor(credential).score())) instanceof CredentialInactive ? true : undefined));

    await expectRefusal(clientFor(credential).score(), 'CredentialInactive');
  });

  test('when the credential may not be used from this address, then AddressNotAllowed', async () => {
    const credential = await createAuthorization(['qr_score'], ORG, { allowedCidrs: ['192.0.2.0/24'] });

    await expectRefusal(clientFor(credential).score(), 'AddressNotAllowed');
  });

  test('when the scope was not granted, then InsufficientScope', async () => {
    const credential = await createAuthorization(['qr_score']);

    await expectRefusal(clientFor(credential).pillars(), 'InsufficientScope');
  });

  test('when the organization has no score yet, then ScoreNotFound and PillarsNotFound', async () => {
    const credential = await createAuthorization(['qr_score', 'pillar_breakdown'], EMPTY_ORG);

    await expectRefusal(clientFor(credential).score(), 'ScoreNotFound');
    await expectRefusal(clientFor(credential).pillars(), 'PillarsNotFound');
  });

  test('when a history parameter is bad, then InvalidParameter', async () => {
    const credential = await createAuthorization(['score_trend']);

    await expectRefusal(clientFor(credential).history({ limit: 0 }).next(), 'InvalidParameter');
  });

  test('when the credential has used its requests for the minute and no retry is allowed, then RateLimited with retryAfter', async () => {
    const credential = await createAuthorization(['qr_score']);
    const client = clientFor(credential, { maxRetries: 0, verifySignatures: false });

    const outcomes = await Promise.all(Array.from({ length: RATE_LIMIT + 1 }, () => refusalOf(client.score())));

    const refusals = outcomes.filter((outcome) => outcome !== undefined);
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) {
      expectRefused(refusal, 'RateLimited');
      expect((refusal as RateLimited).retryAfter).toBeGreaterThanOrEqual(1);
      expect((refusal as RateLimited).retryAfter).toBeLessThanOrEqual(60);
    }
  });

  describe('a read API still starting: the distributed runtime with no server reachable', () => {
    let readApi: ReturnType<typeof spawn>;
    let baseUrl: string;
    let output = '';

    beforeAll(async () => {
      // As the Python suite's starting_runtime: Kafka, MongoDB and Redis on a loopback port nobody
      // listens on. The service listens at once and answers 503 SERVICE_UNAVAILABLE while it waits.
      const [port, nobody] = [await freePort(), await freePort()];
      readApi = spawn(process.execPath, [join(REPO_ROOT, 'services/read-api/dist/main.js')], {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          RUNTIME: 'distributed',
          KAFKA_BROKERS: `127.0.0.1:${nobody}`,
          MONGO_URL: `mongodb://127.0.0.1:${nobody}/`,
          REDIS_URL: `redis://127.0.0.1:${nobody}`,
          JWT_HS256_SECRET: 'sdk-starting-read-api-0123456789abcdef',
          RESPONSE_SIGNING_KEYS: TEST_RESPONSE_SIGNING_KEYS,
          SUBJECT_KEYS_MASTER_KEY: TEST_SUBJECT_KEYS_MASTER_KEY,
          READ_API_HOST: '127.0.0.1',
          READ_API_PORT: String(port),
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      readApi.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      readApi.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const origin = `http://127.0.0.1:${port}`;
      await eventually(async () => {
        if (readApi.exitCode !== null) throw new Error(`the read API exited with ${readApi.exitCode}:\n${output}`);
        return (await fetch(`${origin}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined;
      }, 20_000);
      baseUrl = `${origin}/v1`;
    }, 30_000);

    afterAll(async () => {
      if (readApi.exitCode === null && readApi.signalCode === null) {
        const exited = new Promise((done) => readApi.once('exit', done));
        readApi.kill('SIGTERM');
        await exited;
      }
    });

    test('when no retry is allowed, then ServiceUnavailable at once, with the Retry-After the service sent', async () => {
      const started = Date.now();
      const refusal = await refusalOf(new Client({ clientId: `rs_${'Q'.repeat(24)}`, apiKey: 'rsk_x', baseUrl, maxRetries: 0 }).score());

      expectRefused(refusal, 'ServiceUnavailable');
      expect(refusal).toBeInstanceOf(ServiceUnavailable);
      expect((refusal as ServiceUnavailable).retryAfter).toBe(5);
      expect(Date.now() - started).toBeLessThan(4_000);
    });

    test('when one retry is allowed, then the client waits the 5 s Retry-After says, tries once more, and ends in ServiceUnavailable', async () => {
      const started = Date.now();
      const refusal = await refusalOf(new Client({ clientId: `rs_${'Q'.repeat(24)}`, apiKey: 'rsk_x', baseUrl, maxRetries: 1 }).pillars());

      expectRefused(refusal, 'ServiceUnavailable');
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    }, 20_000);
  });
});

/** A loopback port free at the time of asking. */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createNetServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => done(port));
    });
  });
}

describe('webhooks', () => {
  let receiver: Server;
  let received: { headers: IncomingHttpHeaders; body: Buffer }[];

  beforeAll(async () => {
    received = [];
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((listening) => receiver.listen(0, '127.0.0.1', listening));
  });

  afterAll(() => new Promise<void>((closed) => receiver.close(() => closed())));

  test('when a webhook is created and a score changes, then the delivery verifies with its secret, is listed, and the webhook can be deleted', async () => {
    const credential = await createAuthorization(['qr_score'], WEBHOOK_ORG);
    const client = clientFor(credential);
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    // The notifier follows the event log too.
    await eventually(() => client.webhooks.list().catch(() => undefined));

    const created = await client.webhooks.create(url, ['score.updated']);
    expect(created).toMatchObject({ id: expect.stringMatching(/^wh_/), url, events: ['score.updated'], status: 'active' });
    expect(created.secret).toMatch(/^whsec_/);
    expect(await client.webhooks.list()).toEqual([
      // Decision 45: every webhook says which score changes it hears of; none given, `{}`: every change.
      {
        id: created.id,
        url,
        events: ['score.updated'],
        status: 'active',
        disabledReason: null,
        createdAt: created.createdAt,
        conditions: {},
      },
    ]);

    await postScores(WEBHOOK_ORG, [{ scoreDate: SCORE_DATES[4]!, score: 81 }]);
    const delivery = await eventually(() => Promise.resolve(received[0]), 15_000);
    const payload: WebhookPayload = verifyWebhook(created.secret, delivery.headers, delivery.body);
    expect(payload).toMatchObject({ type: 'score.updated', data: { clientId: credential.clientId, score: 81, scoreDate: SCORE_DATES[4] } });
    // The same delivery with its body changed is refused with the class a response's failed signature has.
    expect(() => verifyWebhook(created.secret, delivery.headers, delivery.body.toString('utf8').replace('81', '18'))).toThrow(
      SignatureError,
    );

    const deliveries = await eventually(async () => {
      const listed = await client.webhooks.deliveries(created.id);
      return listed.some((attempt) => attempt.status === 'succeeded') ? listed : undefined;
    });
    expect(deliveries[0]).toMatchObject({ eventType: 'score.updated', attempt: 1, status: 'succeeded', responseCode: 204 });
    expect(deliveries[0]?.messageId).toBe(delivery.headers['webhook-id']);

    await client.webhooks.delete(created.id);
    expect(await client.webhooks.list()).toEqual([]);
    await expect(client.webhooks.deliveries(created.id)).rejects.toMatchObject({
      name: 'WebhookNotFound',
      status: 404,
      code: 'WEBHOOK_NOT_FOUND',
    });
  }, 30_000);
});

const SDK_OPERATIONS = [
  'getScore',
  'getPillars',
  'listScoreHistory',
  'getCertificate',
  'getSigningKeys',
  'createWebhook',
  'listWebhooks',
  'deleteWebhook',
  'listWebhookDeliveries',
];

everyAnswerDocumented('the Client', { answered, origins: () => [product.urls.readApi, product.urls.notifier] }, SDK_OPERATIONS);
