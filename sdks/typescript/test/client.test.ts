import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookHeaders } from '@rsd/platform';
import * as sdk from '@resilience-score/client';
import { REPO_ROOT } from '../../../test/support/embedded-process.js';
import {
  ApiError,
  Client,
  InvalidApiKey,
  ResilienceScoreError,
  ServiceUnavailable,
  SignatureError,
  verifyWebhook,
} from '@resilience-score/client';

/**
 * What the real product cannot be made to do on demand (a 503, a key change, a redirect, an unsigned
 * 200), against a stand-in API on loopback. The SDK against the real product: client.e2e.test.ts.
 */

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  jwk: { kty: string; crv: string; x: string; kid: string };
}

function aSigningKey(kid: string): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { kid, privateKey, jwk: { kty: 'OKP', crv: 'Ed25519', x: publicKey.export({ format: 'jwk' }).x!, kid } };
}

/** A 200 signed as decision 24 says, written out independently of the SDK's verifier. */
function signed(path: string, body: string, key: SigningKey): Answer {
  const contentType = 'application/json; charset=utf-8';
  const digest = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
  const params = `("@status" "content-type" "content-digest" "@path";req);created=${Math.floor(Date.now() / 1000)};keyid="${key.kid}";alg="ed25519"`;
  const base = [
    `"@status": 200`,
    `"content-type": ${contentType}`,
    `"content-digest": ${digest}`,
    `"@path";req: ${path}`,
    `"@signature-params": ${params}`,
  ].join('\n');
  const signature = sign(null, Buffer.from(base), key.privateKey).toString('base64');
  return {
    status: 200,
    headers: {
      'content-type': contentType,
      'content-digest': digest,
      'signature-input': `sig1=${params}`,
      signature: `sig1=:${signature}:`,
    },
    body,
  };
}

const CLIENT_ID = 'rs_AAAAAAAAAAAAAAAAAAAA';
const SCORE_PATH = `/v1/customers/${CLIENT_ID}/score`;
const SCORE = JSON.stringify({ clientId: CLIENT_ID, scoreDate: '2026-11-20', score: 72, grade: 'Strengthen' });

describe('the TypeScript client against a stand-in API', () => {
  let server: Server;
  let baseUrl: string;
  let answer: (path: string, headers: IncomingHttpHeaders) => Answer;
  let requests: string[];
  let keysSent: Record<string, unknown>;

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req.url!);
      keysSent[req.url!] = req.headers['x-api-key'];
      const { status, headers = {}, body } = answer(req.url!, req.headers);
      res.writeHead(status, headers).end(body);
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  beforeEach(() => {
    requests = [];
    keysSent = {};
  });

  afterAll(() => new Promise<void>((closed) => server.close(() => closed())));

  const aClient = (options: { verifySignatures?: boolean; maxRetries?: number } = {}) =>
    new Client({ clientId: CLIENT_ID, apiKey: 'rsk_test', baseUrl: `${baseUrl}/v1`, verifySignatures: false, ...options });

  test('when a 429 asks to wait a second, then the client waits that long and returns what the next try gets', async () => {
    let calls = 0;
    answer = () => ((calls += 1) === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200, body: SCORE });
    const started = Date.now();

    const score = await aClient().score();

    expect(score.score).toBe(72);
    expect(requests).toEqual([SCORE_PATH, SCORE_PATH]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  test('when every answer is 503, then it is tried maxRetries more times and ends in ServiceUnavailable', async () => {
    answer = () => ({
      status: 503,
      headers: { 'retry-after': '0', 'content-type': 'application/json' },
      body: JSON.stringify({ error: 'Service Unavailable', code: 'SERVICE_UNAVAILABLE', message: 'catching up', requestId: 'req-1' }),
    });

    const refusal = aClient({ maxRetries: 2 }).score();

    await expect(refusal).rejects.toBeInstanceOf(ServiceUnavailable);
    await expect(refusal).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', requestId: 'req-1', retryAfter: 0 });
    expect(requests).toHaveLength(3);
  });

  test.each([
    [500, 'INTERNAL_ERROR', ApiError],
    [401, 'INVALID_API_KEY', InvalidApiKey],
  ])('when the answer is %i, then it is not tried again', async (status, code, ErrorClass) => {
    answer = () => ({ status, body: JSON.stringify({ error: 'x', code, message: 'no' }) });

    await expect(aClient().score()).rejects.toBeInstanceOf(ErrorClass);
    expect(requests).toHaveLength(1);
  });

  test('when the API answers with a redirect, then the client does not follow it with the key', async () => {
    answer = (path) =>
      path === SCORE_PATH ? { status: 302, headers: { location: `${baseUrl}/elsewhere` } } : { status: 200, body: SCORE };

    await expect(aClient().score()).rejects.toMatchObject({ name: 'ApiError', status: 302 });
    expect(requests).toEqual([SCORE_PATH]);
  });

  describe('signatures', () => {
    const [oldKey, newKey, unknownKey] = [aSigningKey('key-1'), aSigningKey('key-2'), aSigningKey('key-3')];
    let published: SigningKey[];
    let signingKey: SigningKey;

    beforeEach(() => {
      answer = (path) =>
        path === '/.well-known/jwks.json'
          ? { status: 200, body: JSON.stringify({ keys: published.map((key) => key.jwk) }) }
          : signed(path, SCORE, signingKey);
    });

    test('when the signature names a key the cached JWKS lacks, then the JWKS is fetched once more, without the API key, and the response verifies', async () => {
      [published, signingKey] = [[oldKey], oldKey];
      const client = aClient({ verifySignatures: true });
      await client.score();
      [published, signingKey] = [[newKey, oldKey], newKey];

      const score = await client.score();

      expect(score.score).toBe(72);
      expect(requests.filter((path) => path === '/.well-known/jwks.json')).toHaveLength(2);
      expect(keysSent).toEqual({ [SCORE_PATH]: 'rsk_test', '/.well-known/jwks.json': undefined });
    });

    test('when the key is still unknown after that one fetch, then SignatureError, and the JWKS was fetched only once more', async () => {
      [published, signingKey] = [[oldKey], oldKey];
      const client = aClient({ verifySignatures: true });
      await client.score();
      signingKey = unknownKey;

      await expect(client.score()).rejects.toThrow(new SignatureError('key "key-3" is not in the JWKS'));
      expect(requests.filter((path) => path === '/.well-known/jwks.json')).toHaveLength(2);
    });

    test('when signingKeys() is called, then it answers the JWKS as published, asked without the key, and the client verifies with it from then on', async () => {
      [published, signingKey] = [[newKey], newKey];
      const client = aClient({ verifySignatures: true });

      expect(await client.signingKeys()).toEqual({ keys: [newKey.jwk] });
      await client.score();

      expect(requests).toEqual(['/.well-known/jwks.json', SCORE_PATH]);
      expect(keysSent).toEqual({ [SCORE_PATH]: 'rsk_test', '/.well-known/jwks.json': undefined });
    });

    test('when the JWKS cannot be fetched, then signingKeys() throws the refusal, a ResilienceScoreError like a SignatureError', async () => {
      answer = () => ({ status: 503, headers: { 'retry-after': '0' }, body: '' });

      const refusal = aClient({ maxRetries: 0 }).signingKeys();

      await expect(refusal).rejects.toBeInstanceOf(ServiceUnavailable);
      await expect(refusal).rejects.toBeInstanceOf(ResilienceScoreError);
      expect(new SignatureError('x')).toBeInstanceOf(ResilienceScoreError);
      expect(new SignatureError('x')).not.toBeInstanceOf(ApiError);
    });

    test('when a 200 carries no signature, then SignatureError; with verifySignatures false, the data', async () => {
      answer = () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: SCORE });

      await expect(aClient({ verifySignatures: true }).score()).rejects.toThrow(new SignatureError('the response is not signed'));
      await expect(aClient({ verifySignatures: false }).score()).resolves.toMatchObject({ score: 72 });
    });
  });
});

describe('verifyWebhook', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const body = JSON.stringify({
    type: 'grade.changed',
    timestamp: '2026-11-20T10:00:00.000Z',
    data: { clientId: CLIENT_ID, scoreDate: '2026-11-20', from: 'Improve', to: 'Strengthen' },
  });
  const now = new Date('2026-11-20T10:00:05.000Z');
  // Signed by the notifier's own code (libs/platform), not by the SDK.
  const headers = webhookHeaders({ id: 'msg_2KWPBgLlAfxdpx2AI54pPJ85', timestamp: Math.floor(now.getTime() / 1000), body, secret });

  test('when a delivery is signed with the secret, then its payload is returned', () => {
    expect(verifyWebhook(secret, headers, Buffer.from(body), { now })).toEqual(JSON.parse(body));
    expect(verifyWebhook(secret, new Headers(headers), body, { now }).type).toBe('grade.changed');
  });

  test.each([
    ['the body was changed', secret, headers, body.replace('Strengthen', 'Sustain'), now],
    ['another secret is used', `whsec_${Buffer.alloc(32, 8).toString('base64')}`, headers, body, now],
    ['the timestamp is too old', secret, headers, body, new Date(now.getTime() + 6 * 60_000)],
    ['a header is missing', secret, { ...headers, 'webhook-signature': undefined }, body, now],
  ])('when %s, then SignatureError, as for a response (decision 37)', (_case, key, received, payload, at) => {
    let thrown: unknown;
    try {
      verifyWebhook(key, received, payload, { now: at });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SignatureError);
    expect(thrown).toBeInstanceOf(ResilienceScoreError);
    expect(thrown).toMatchObject({ name: 'SignatureError' });
  });
});

describe('the error classes both SDKs share', () => {
  /** Each class's status and code, stated once for both SDKs (sdks/conformance/error-classes.json). */
  const { classes } = JSON.parse(readFileSync(`${REPO_ROOT}/sdks/conformance/error-classes.json`, 'utf8')) as {
    classes: Record<string, { status: number; code: string | null }>;
  };

  test.each(Object.entries(classes))(
    'when the API refuses as %s stands for, then that class is thrown, with its status and code',
    async (name, { status, code }) => {
      // Answered by a stand-in fetch: what matters here is the mapping of status and code to class.
      const refusing: typeof fetch = () =>
        Promise.resolve(
          new Response(JSON.stringify({ ...(code === null ? {} : { code }), message: 'refused', requestId: 'req-1' }), {
            status,
            headers: { 'content-type': 'application/json', 'retry-after': '1' },
          }),
        );
      const client = new Client({
        clientId: CLIENT_ID,
        apiKey: 'rsk_x',
        baseUrl: 'http://127.0.0.1:9/v1',
        notifierUrl: 'http://127.0.0.1:9/v1',
        fetch: refusing,
        maxRetries: 0,
      });

      let thrown: unknown;
      try {
        await client.webhooks.list();
      } catch (error) {
        thrown = error;
      }

      const ErrorClass = (sdk as Record<string, unknown>)[name];
      expect(ErrorClass).toEqual(expect.any(Function));
      expect(thrown).toBeInstanceOf(ErrorClass as new () => unknown);
      expect(thrown).toBeInstanceOf(ApiError);
      expect(thrown).toMatchObject({ name, status, code: code ?? undefined, requestId: 'req-1' });
    },
  );
});

describe('webhooks', () => {
  test('when an update changes nothing, then it is refused before anything is sent', async () => {
    const sent: string[] = [];
    const client = new Client({
      clientId: CLIENT_ID,
      apiKey: 'rsk_x',
      baseUrl: 'http://127.0.0.1:9/v1',
      notifierUrl: 'http://127.0.0.1:9/v1',
      fetch: (input) => {
        sent.push(input instanceof Request ? input.url : input.toString());
        return Promise.reject(new Error('not to be sent'));
      },
    });

    await expect(client.webhooks.update('wh_AAAAAAAAAAAAAAAAAAAA', {})).rejects.toThrow(/at least one of url, events, enabled, conditions/);
    await expect(client.webhooks.update('wh_AAAAAAAAAAAAAAAAAAAA', { url: undefined })).rejects.toBeInstanceOf(TypeError);
    expect(sent).toEqual([]);
  });
});
