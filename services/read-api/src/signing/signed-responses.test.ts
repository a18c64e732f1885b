import { createHash, createPublicKey, verify } from 'node:crypto';
import { parseDictionary, type InnerList, type Item } from 'structured-headers';
import type { RunningApp } from '@rsd/testkit';
import { createResponseSigner } from './response-signer';
import { issueCredential, recordScore, testClock, testSigningKeys, type IssuedCredential } from '../testing/read-api-fixtures';
import { startReadApi } from '../testing/read-api-harness';

interface Jwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  alg: string;
  use: string;
}

interface Signed {
  status: number;
  headers: Headers;
  body: Buffer;
  requestPath: string;
}

/**
 * A verifier written from RFC 9421 section 3.2 and RFC 9530, sharing no code with the signer: it
 * rebuilds the signature base from the message as received and checks it with the published key.
 * Returns the reason for a refusal, or 'valid'.
 */
function verifyIndependently(message: Signed, jwks: Jwk[]): string {
  const digestHeader = message.headers.get('content-digest');
  const input = message.headers.get('signature-input');
  const signatureHeader = message.headers.get('signature');
  if (!digestHeader || !input || !signatureHeader) return 'unsigned';
  const digest = parseDictionary(digestHeader).get('sha-256') as Item | undefined;
  const expected = createHash('sha256').update(message.body).digest();
  if (!digest || !Buffer.from(digest[0] as ArrayBuffer).equals(expected)) return 'digest mismatch';

  const signatureInput = parseDictionary(input).get('sig1') as InnerList | undefined;
  const signature = parseDictionary(signatureHeader).get('sig1') as Item | undefined;
  if (!signatureInput || !signature) return 'no sig1';
  const [components, params] = signatureInput;
  const key = jwks.find((jwk) => jwk.kid === params.get('keyid'));
  if (!key) return 'unknown kid';
  if (params.get('alg') !== 'ed25519') return 'unexpected alg';

  const lines = components.map(([name, componentParams]) => {
    const label = `"${String(name)}"${componentParams.get('req') === true ? ';req' : ''}`;
    switch (name) {
      case '@status':
        return `${label}: ${message.status}`;
      case '@path':
        return `${label}: ${message.requestPath}`;
      default:
        return `${label}: ${message.headers.get(String(name))?.trim()}`;
    }
  });
  // The signature parameters as the Signature-Input header carries them (RFC 9421 2.3).
  const paramsLine = input.slice(input.indexOf('=') + 1);
  const base = [...lines, `"@signature-params": ${paramsLine}`].join('\n');
  const publicKey = createPublicKey({ key: { kty: key.kty, crv: key.crv, x: key.x }, format: 'jwk' });
  return verify(null, Buffer.from(base), publicKey, Buffer.from(signature[0] as ArrayBuffer)) ? 'valid' : 'bad signature';
}

describe('signed responses (decision 24)', () => {
  let running: RunningApp;
  let credential: IssuedCredential;
  const keys = testSigningKeys('rsd-2026-11');

  beforeAll(async () => {
    const readApi = await startReadApi({
      signingKeys: { ...keys, published: [...keys.published, testSigningKeys('rsd-2026-05').published[0]!] },
      clock: testClock('2026-11-23T12:00:00.000Z'),
    });
    running = readApi;
    const { views } = readApi;
    credential = await issueCredential(views);
    for (const day of ['20', '21', '22'])
      await recordScore(views, { organizationId: credential.organizationId, scoreDate: `2026-11-${day}` });
  });

  afterAll(() => running.close());

  async function fetchSigned(resource: string): Promise<Signed> {
    const requestPath = `/v1/customers/${credential.clientId}/${resource}`;
    const response = await fetch(`${running.baseUrl}${requestPath}`, { headers: { 'x-api-key': credential.apiKey } });
    return {
      status: response.status,
      headers: response.headers,
      body: Buffer.from(await response.arrayBuffer()),
      requestPath: requestPath.split('?')[0]!,
    };
  }

  async function publishedKeys(): Promise<Jwk[]> {
    const response = await fetch(`${running.baseUrl}/.well-known/jwks.json`);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    return ((await response.json()) as { keys: Jwk[] }).keys;
  }

  test('when the keys are fetched, then every configured key is published as an Ed25519 JWK without its private part', async () => {
    const jwks = await publishedKeys();

    expect(jwks.map((jwk) => jwk.kid)).toEqual(['rsd-2026-11', 'rsd-2026-05']);
    for (const jwk of jwks) {
      expect(jwk).toEqual({
        kty: 'OKP',
        crv: 'Ed25519',
        x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        kid: jwk.kid,
        alg: 'EdDSA',
        use: 'sig',
      });
    }
  });

  test.each(['score', 'pillars', 'score/history', 'score/history?limit=2'])(
    'when %s is read, then the 200 carries a signature an independent verifier accepts with the published key',
    async (resource) => {
      const signed = await fetchSigned(resource);

      expect(signed.status).toBe(200);
      expect(signed.headers.get('signature-input')).toMatch(
        /^sig1=\("@status" "content-type" "content-digest" "@path";req\);created=\d+;keyid="rsd-2026-11";alg="ed25519"$/,
      );
      expect(signed.headers.get('content-digest')).toMatch(/^sha-256=:[A-Za-z0-9+/]{43}=:$/);
      expect(verifyIndependently(signed, await publishedKeys())).toBe('valid');
    },
  );

  test('when the signature is made, then created is the clock time in seconds', async () => {
    const signed = await fetchSigned('score');

    expect(signed.headers.get('signature-input')).toContain(`;created=${Date.parse('2026-11-23T12:00:00.000Z') / 1000};`);
  });

  test('when the body is tampered with, then verification fails', async () => {
    const signed = await fetchSigned('score');
    const tampered = Buffer.from(signed.body.toString('utf8').replace(/"score":\d+/, '"score":99'));

    expect(verifyIndependently({ ...signed, body: tampered }, await publishedKeys())).toBe('digest mismatch');
  });

  test('when the body and its digest are both replaced, then the signature no longer verifies', async () => {
    const signed = await fetchSigned('score');
    const tampered = Buffer.from(signed.body.toString('utf8').replace(/"score":\d+/, '"score":99'));
    const headers = new Headers(signed.headers);
    headers.set('content-digest', `sha-256=:${createHash('sha256').update(tampered).digest('base64')}:`);

    expect(verifyIndependently({ ...signed, headers, body: tampered }, await publishedKeys())).toBe('bad signature');
  });

  test('when the response is presented for another path, then verification fails', async () => {
    const signed = await fetchSigned('score');

    expect(verifyIndependently({ ...signed, requestPath: `/v1/customers/rs_OTHERCLIENTID0000/score` }, await publishedKeys())).toBe(
      'bad signature',
    );
  });

  test('when the status is presented differently, then verification fails', async () => {
    const signed = await fetchSigned('score');

    expect(verifyIndependently({ ...signed, status: 203 }, await publishedKeys())).toBe('bad signature');
  });

  test('when the key id is not among the published keys, then verification fails', async () => {
    const signed = await fetchSigned('score');
    const otherKeys = [testSigningKeys('rsd-2026-11').published[0]!];

    expect(
      verifyIndependently(
        signed,
        (await publishedKeys()).filter((jwk) => jwk.kid !== 'rsd-2026-11'),
      ),
    ).toBe('unknown kid');
    // Same kid, another key: a forged JWKS does not verify either.
    expect(verifyIndependently(signed, otherKeys)).toBe('bad signature');
  });

  test('when a request is refused, then the error carries no signature: only 200s are signed', async () => {
    const response = await fetch(`${running.baseUrl}/v1/customers/${credential.clientId}/score`, { headers: { 'x-api-key': 'rsk_wrong' } });

    expect(response.status).toBe(401);
    expect(response.headers.get('signature')).toBeNull();
  });
});

describe('signature reuse', () => {
  const response = (path: string, body: string, second: number) => ({
    status: 200,
    contentType: 'application/json; charset=utf-8',
    body: Buffer.from(body),
    requestPath: path,
    created: new Date(Date.UTC(2026, 10, 23, 12, 0, second)),
  });

  test('when an unchanged representation is signed again within the window, then the signature made first is reused, created and all', () => {
    const signer = createResponseSigner(testSigningKeys(), { reuseSeconds: 60 });

    const first = signer.sign(response('/v1/customers/rs_A/score', '{"score":70}', 0));
    const again = signer.sign(response('/v1/customers/rs_A/score', '{"score":70}', 59));

    expect(again).toBe(first);
    expect(first['signature-input']).toContain(`created=${Date.UTC(2026, 10, 23, 12, 0, 0) / 1000};`);
  });

  test('when the body, the path or the window changes, then a new signature is made', () => {
    const signer = createResponseSigner(testSigningKeys(), { reuseSeconds: 60 });
    const first = signer.sign(response('/v1/customers/rs_A/score', '{"score":70}', 0));

    expect(signer.sign(response('/v1/customers/rs_A/score', '{"score":71}', 1)).signature).not.toBe(first.signature);
    expect(signer.sign(response('/v1/customers/rs_B/score', '{"score":70}', 1)).signature).not.toBe(first.signature);
    expect(signer.sign(response('/v1/customers/rs_A/score', '{"score":70}', 60))['signature-input']).not.toBe(first['signature-input']);
  });

  test('when a body issued for one request alone is signed, then it is signed afresh and pushes out no signature that is reused', () => {
    const signer = createResponseSigner(testSigningKeys(), { reuseSeconds: 60, maxReused: 1 });
    const score = signer.sign(response('/v1/customers/rs_A/score', '{"score":70}', 0));

    const certificate = signer.sign(response('/v1/customers/rs_A/certificate', '{"jws":"…"}', 1), undefined, { once: true });

    expect(certificate['signature-input']).toContain(`created=${Date.UTC(2026, 10, 23, 12, 0, 1) / 1000};`);
    expect(signer.sign(response('/v1/customers/rs_A/score', '{"score":70}', 2))).toBe(score);
  });

  test('when reuse is off, then every response is signed afresh', () => {
    const signer = createResponseSigner(testSigningKeys(), { reuseSeconds: 0 });

    const first = signer.sign(response('/p', '{}', 0));

    expect(signer.sign(response('/p', '{}', 0))).not.toBe(first);
  });
});
