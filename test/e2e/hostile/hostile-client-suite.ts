import { randomBytes, randomUUID } from 'node:crypto';
import { signDevToken } from '@rsd/platform';
import { aScoreSubmission } from '@rsd/testkit';
import { eventually } from '../../support/embedded-process';
import { attackerKeyPair, hmacJwt, nowInSeconds, rsaJwt, unsignedJwt } from '../../support/forged-tokens';
import { rawRequest, type RawRequest, type RawResponse } from '../../support/raw-http';

// What a hostile client tries, on whichever runtime `start` brings up: forged and confused tokens,
// other organizations' data, hostile paths and Client IDs, oversized and deeply nested bodies, header
// floods. Every answer must be the documented refusal (status, code, and for API operations a status
// and code the service's own OpenAPI document lists), never a 5xx, never internals, always `nosniff`.
// Each request goes over a fresh socket, written byte for byte (see raw-http.ts).

export type Service = 'readApi' | 'credentials' | 'scoreIngest' | 'notifier' | 'console';

const SERVICES: readonly Service[] = ['readApi', 'credentials', 'scoreIngest', 'notifier'];

export interface HostileTarget {
  urls: Record<Service, string>;
  stop(): Promise<void>;
}

/**
 * `env` carries what the suite needs set: the token secret, no per-address limit in the way, and an
 * organization's webhook limit low enough to reach.
 */
export type StartTarget = (env: Record<string, string>) => Promise<HostileTarget>;

interface Expected {
  status: number;
  /** undefined: the body has no code (the HTTP layer's own refusals) or the answer is a success. */
  code?: string;
}

/** An API operation as its OpenAPI document names it, so the answer can be checked against the document. */
interface Operation {
  method: string;
  template: string;
}

// Stack frames, file paths, driver and runtime error names: none may reach a client.
const INTERNALS =
  /\n\s+at\s|node_modules|\/(?:work|home|usr|tmp|app)\/|\.[jt]s:\d+|(?:Type|Range|Syntax|Reference)Error|Mongo\w*Error|KafkaJS|ECONN|ERR_/;

const SERVICE_OPERATIONS = {
  list: { method: 'GET', template: '/organizations/{organizationId}/authorizations' },
  create: { method: 'POST', template: '/organizations/{organizationId}/authorizations' },
  get: { method: 'GET', template: '/organizations/{organizationId}/authorizations/{clientId}' },
  revoke: { method: 'POST', template: '/organizations/{organizationId}/authorizations/{clientId}/revoke' },
  scores: { method: 'POST', template: '/scores' },
  score: { method: 'GET', template: '/customers/{clientId}/score' },
  pillars: { method: 'GET', template: '/customers/{clientId}/pillars' },
  organizationWebhooks: { method: 'GET', template: '/organizations/{organizationId}/webhooks' },
  organizationWebhookTest: { method: 'POST', template: '/organizations/{organizationId}/webhooks/{id}/test' },
  grantWebhookDeliveries: { method: 'GET', template: '/customers/{clientId}/webhooks/{id}/deliveries' },
  grantWebhooks: { method: 'GET', template: '/customers/{clientId}/webhooks' },
  portfolioWebhook: { method: 'DELETE', template: '/portfolio/webhooks/{id}' },
} as const satisfies Record<string, Operation>;

/** Decision 50's bound on an organization's webhook management, lowered for the suite to reach it in a few requests. */
const ORGANIZATION_LIMIT = 20;

const REQUEST_TIMEOUT_MS = 5000;

const dayOffset = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

export function hostileClientTests(start: StartTarget): void {
  const runId = randomUUID().slice(0, 8);
  const ORG = `hostile-a-${runId}`;
  const OTHER_ORG = `hostile-b-${runId}`;
  const secret = randomBytes(32).toString('base64url');
  // Scores: the initial ones are three days old, every refused write is dated yesterday, and the last
  // accepted ones two days ago. Had any refused write been emitted, yesterday's score would be the latest.
  const INITIAL = dayOffset(-3);
  const REFUSED = dayOffset(-1);
  const FINAL = dayOffset(-2);

  let target: HostileTarget;
  const docs = {} as Record<Service, { paths: Record<string, Record<string, { responses: Record<string, { description?: string }> }>> }>;
  let token: string;
  let otherToken: string;
  let engineToken: string;
  let reader: { clientId: string; apiKey: string };
  let otherReader: { clientId: string; apiKey: string };

  const claims = () => ({
    org: ORG,
    scope: 'authorizations:write scores:write',
    sub: 'hostile',
    iat: nowInSeconds(),
    exp: nowInSeconds() + 600,
  });
  const scoreBody = (organizationId = ORG, scoreDate = REFUSED) =>
    JSON.stringify(aScoreSubmission({ organizationId, scoreDate, score: 13 }));

  const send = (service: Service, request: RawRequest | Buffer) => rawRequest(target.urls[service], request);
  const json = (body: string): Array<[string, string]> => (body ? [['Content-Type', 'application/json']] : []);
  const asCaller = (authorization: string, extra: Array<[string, string]> = []): Array<[string, string]> => [
    ['Authorization', authorization],
    ...extra,
  ];

  /** A new auditor grant of `org` by claim link (with `bearer`), and its link's path on the credentials service. */
  async function aClaimPath(org = ORG, bearer = token): Promise<string> {
    const body = JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], keyDelivery: 'claimLink' });
    const path = `/v1/organizations/${org}/authorizations`;
    const created = await send('credentials', { method: 'POST', path, headers: asCaller(`Bearer ${bearer}`, json(body)), body });
    expect(created.status).toBe(201);
    return new URL((created.json as { claim: { url: string } }).claim.url).pathname;
  }

  function expectAnswer(service: Service, response: RawResponse, expected: Expected, operation?: Operation): void {
    expect(response.status).toBeLessThan(500);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.body).not.toMatch(INTERNALS);
    expect({ status: response.status, code: response.json?.code }).toEqual({ status: expected.status, code: expected.code });
    if (response.status >= 400) {
      expect(response.json).toMatchObject({ error: expect.any(String), message: expect.any(String), timestamp: expect.any(String) });
    }
    if (operation) {
      const responses = docs[service].paths[operation.template]?.[operation.method.toLowerCase()]?.responses ?? {};
      expect(Object.keys(responses)).toContain(String(expected.status));
      if (expected.code) expect(responses[String(expected.status)]?.description ?? '').toContain(expected.code);
    }
  }

  async function readScore(credential: { clientId: string; apiKey: string }): Promise<RawResponse> {
    return send('readApi', { path: `/v1/customers/${credential.clientId}/score`, headers: [['x-api-key', credential.apiKey]] });
  }

  beforeAll(async () => {
    target = await start({
      JWT_HS256_SECRET: secret,
      FAILED_AUTH_LIMIT_PER_MINUTE: '100000',
      ORGANIZATION_RATE_LIMIT_PER_MINUTE: String(ORGANIZATION_LIMIT),
      LOG_LEVEL: 'info',
      // Short, so a body that never arrives is answered 408 within the test's patience.
      HTTP_HEADERS_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    });
    for (const service of SERVICES) {
      docs[service] = (await (await fetch(`${target.urls[service]}/v1/openapi.json`)).json()) as (typeof docs)[Service];
    }
    token = await signDevToken(secret, { org: ORG, scope: 'authorizations:write scores:write' });
    otherToken = await signDevToken(secret, { org: OTHER_ORG, scope: 'authorizations:write scores:write' });
    engineToken = await signDevToken(secret, { scope: 'scores:write' });

    const create = async (org: string, bearer: string) => {
      const created = await send('credentials', {
        method: 'POST',
        path: `/v1/organizations/${org}/authorizations`,
        headers: asCaller(`Bearer ${bearer}`, json('x')),
        body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'] }),
      });
      expect(created.status).toBe(201);
      return created.json as { clientId: string; apiKey: string };
    };
    reader = await create(ORG, token);
    otherReader = await create(OTHER_ORG, otherToken);
    for (const [org, bearer] of [
      [ORG, token],
      [OTHER_ORG, otherToken],
    ] as const) {
      const posted = await send('scoreIngest', {
        method: 'POST',
        path: '/v1/scores',
        headers: asCaller(`Bearer ${bearer}`, json('x')),
        body: scoreBody(org, INITIAL),
      });
      expect(posted.status).toBe(202);
    }
    for (const credential of [reader, otherReader]) {
      await eventually(async () => ((await readScore(credential)).status === 200 ? true : undefined), 30_000, 100);
    }
  }, 180_000);

  afterAll(async () => {
    await target?.stop();
  }, 60_000);

  describe('forged, expired and confused bearer tokens', () => {
    const attacker = attackerKeyPair();
    const invalidTokens: Array<[string, () => string]> = [
      ['no token at all', () => ''],
      ['alg none, unsigned', () => unsignedJwt({ alg: 'none', typ: 'JWT' }, claims())],
      ['alg "None", unsigned', () => unsignedJwt({ alg: 'None', typ: 'JWT' }, claims())],
      [
        'alg none with an HS256 signature',
        () => `${unsignedJwt({ alg: 'none' }, claims())}${hmacJwt({ alg: 'none' }, claims(), secret).split('.')[2]}`,
      ],
      ['RS256 header, signed with the HS256 secret (algorithm confusion)', () => hmacJwt({ alg: 'RS256', typ: 'JWT' }, claims(), secret)],
      ['ES256 header, signed with the HS256 secret', () => hmacJwt({ alg: 'ES256' }, claims(), secret)],
      ['EdDSA header, signed with the HS256 secret', () => hmacJwt({ alg: 'EdDSA' }, claims(), secret)],
      ['HS512 with the right secret (an algorithm not accepted)', () => hmacJwt({ alg: 'HS512' }, claims(), secret, 'sha512')],
      ['HS256 with the wrong secret', () => hmacJwt({ alg: 'HS256' }, claims(), randomBytes(32).toString('base64url'))],
      ['HS256 keyed with the attacker key’s PEM (key confusion)', () => hmacJwt({ alg: 'HS256' }, claims(), attacker.publicPem)],
      ['expired a minute ago', () => hmacJwt({ alg: 'HS256' }, { ...claims(), exp: nowInSeconds() - 60 }, secret)],
      ['nbf ten minutes ahead', () => hmacJwt({ alg: 'HS256' }, { ...claims(), nbf: nowInSeconds() + 600 }, secret)],
      ['no exp', () => hmacJwt({ alg: 'HS256' }, { ...claims(), exp: undefined }, secret)],
      ['exp as a string', () => hmacJwt({ alg: 'HS256' }, { ...claims(), exp: String(nowInSeconds() + 600) }, secret)],
      [
        'kid traversal to /dev/null, signed with an empty key',
        () => hmacJwt({ alg: 'HS256', kid: '../../../../../../dev/null' }, claims(), ''),
      ],
      ['kid with SQL, signed with an empty key', () => hmacJwt({ alg: 'HS256', kid: "x' UNION SELECT '' --" }, claims(), '')],
      [
        'jku to the attacker’s JWKS, RS256 with the attacker’s key',
        () => rsaJwt({ alg: 'RS256', jku: 'http://127.0.0.1:9/jwks.json', kid: 'attacker' }, claims(), attacker.privateKey),
      ],
      [
        'x5u to the attacker’s certificate, RS256 with the attacker’s key',
        () => rsaJwt({ alg: 'RS256', x5u: 'http://127.0.0.1:9/cert.pem' }, claims(), attacker.privateKey),
      ],
      [
        'the attacker’s key embedded as jwk, RS256 with it',
        () => rsaJwt({ alg: 'RS256', jwk: attacker.publicJwk }, claims(), attacker.privateKey),
      ],
      ['a critical header extension nobody understands', () => hmacJwt({ alg: 'HS256', crit: ['exp-x'], 'exp-x': 1 }, claims(), secret)],
      ['the signature stripped', () => `${hmacJwt({ alg: 'HS256' }, claims(), secret).split('.').slice(0, 2).join('.')}.`],
      [
        'the payload swapped after signing',
        () => {
          const [header, , signature] = hmacJwt({ alg: 'HS256' }, claims(), secret).split('.');
          return `${header}.${Buffer.from(JSON.stringify({ ...claims(), org: OTHER_ORG })).toString('base64url')}.${signature}`;
        },
      ],
      ['not a JWT', () => 'not.a.jwt'],
    ];

    test.each(invalidTokens)(
      'when the credentials service gets a token with %s, then it is 401 INVALID_TOKEN with a Bearer challenge',
      async (_name, make) => {
        const bearer = make();
        const answer = await send('credentials', {
          path: `/v1/organizations/${ORG}/authorizations`,
          headers: bearer ? asCaller(`Bearer ${bearer}`) : [],
        });
        expectAnswer('credentials', answer, { status: 401, code: 'INVALID_TOKEN' }, SERVICE_OPERATIONS.list);
        expect(answer.headers['www-authenticate']).toBe('Bearer');
      },
    );

    test.each(invalidTokens)(
      'when score ingest gets a token with %s, then it is 401 INVALID_TOKEN with a Bearer challenge',
      async (_name, make) => {
        const bearer = make();
        const body = scoreBody();
        const answer = await send('scoreIngest', {
          method: 'POST',
          path: '/v1/scores',
          headers: bearer ? asCaller(`Bearer ${bearer}`, json(body)) : json(body),
          body,
        });
        expectAnswer('scoreIngest', answer, { status: 401, code: 'INVALID_TOKEN' }, SERVICE_OPERATIONS.scores);
        expect(answer.headers['www-authenticate']).toBe('Bearer');
      },
    );

    const wrongClaimTypes: Array<[string, Record<string, unknown>, Expected]> = [
      ['org as a number', { org: 123 }, { status: 401, code: 'INVALID_TOKEN' }],
      ['org as an array naming the organization', { org: [ORG] }, { status: 401, code: 'INVALID_TOKEN' }],
      ['org as an object', { org: { id: ORG } }, { status: 401, code: 'INVALID_TOKEN' }],
      ['scope as an array', { scope: ['authorizations:write', 'scores:write'] }, { status: 403, code: 'INSUFFICIENT_SCOPE' }],
      ['scope as a number', { scope: 1 }, { status: 403, code: 'INSUFFICIENT_SCOPE' }],
      ['scopes separated by commas', { scope: 'authorizations:write,scores:write' }, { status: 403, code: 'INSUFFICIENT_SCOPE' }],
      ['scopes in capitals', { scope: 'AUTHORIZATIONS:WRITE SCORES:WRITE' }, { status: 403, code: 'INSUFFICIENT_SCOPE' }],
    ];

    test.each(wrongClaimTypes)('when a correctly signed token has %s, then both services refuse it', async (_name, override, expected) => {
      const bearer = hmacJwt({ alg: 'HS256', typ: 'JWT' }, { ...claims(), ...override }, secret);
      // Posting another organization's score: a claim that is not a string must not make the token an engine's.
      const body = scoreBody(OTHER_ORG);
      const posted = await send('scoreIngest', {
        method: 'POST',
        path: '/v1/scores',
        headers: asCaller(`Bearer ${bearer}`, json(body)),
        body,
      });
      expectAnswer('scoreIngest', posted, expected, SERVICE_OPERATIONS.scores);
      const listed = await send('credentials', { path: `/v1/organizations/${ORG}/authorizations`, headers: asCaller(`Bearer ${bearer}`) });
      expectAnswer('credentials', listed, expected, SERVICE_OPERATIONS.list);
    });

    const schemes: Array<[string, (t: string) => string, boolean]> = [
      ['"bearer" in lower case', (t) => `bearer ${t}`, true],
      ['"BEARER" in capitals', (t) => `BEARER ${t}`, true],
      ['several spaces after the scheme', (t) => `Bearer   ${t}`, true],
      ['the Basic scheme', () => `Basic ${Buffer.from(`${ORG}:password`).toString('base64')}`, false],
      ['the Token scheme', (t) => `Token ${t}`, false],
      ['the scheme alone', () => 'Bearer', false],
      ['the token without a scheme', (t) => t, false],
      ['two tokens', (t) => `Bearer ${t} ${t}`, false],
      ['two credentials separated by a comma', (t) => `Bearer ${t}, Bearer ${t}`, false],
      ['a tab instead of a space', (t) => `Bearer\t${t}`, false],
    ];

    test.each(schemes)(
      'when the Authorization header has %s, then it is accepted only if it is a bearer token',
      async (_name, header, accepted) => {
        const listed = await send('credentials', { path: `/v1/organizations/${ORG}/authorizations`, headers: asCaller(header(token)) });
        expectAnswer('credentials', listed, accepted ? { status: 200 } : { status: 401, code: 'INVALID_TOKEN' }, SERVICE_OPERATIONS.list);
        // An accepted score is dated with the initial ones, so it never becomes the latest.
        const body = scoreBody(ORG, accepted ? INITIAL : REFUSED);
        const posted = await send('scoreIngest', {
          method: 'POST',
          path: '/v1/scores',
          headers: asCaller(header(token), json(body)),
          body,
        });
        expectAnswer('scoreIngest', posted, accepted ? { status: 202 } : { status: 401, code: 'INVALID_TOKEN' }, SERVICE_OPERATIONS.scores);
      },
    );
  });

  describe('other organizations’ data', () => {
    /** Sends each request to the credentials service in turn; each must be answered `expected`, as its operation documents. */
    async function expectEachCredentialsAnswer(expected: Expected, requests: Array<[RawRequest, Operation]>): Promise<void> {
      for (const [request, operation] of requests) expectAnswer('credentials', await send('credentials', request), expected, operation);
    }

    test('when an organization’s token lists, reads, creates or revokes under another organization, then it is 403 FORBIDDEN_ORGANIZATION', async () => {
      const headers = asCaller(`Bearer ${token}`);
      const base = `/v1/organizations/${OTHER_ORG}/authorizations`;
      const body = JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'] });
      await expectEachCredentialsAnswer({ status: 403, code: 'FORBIDDEN_ORGANIZATION' }, [
        [{ path: base, headers }, SERVICE_OPERATIONS.list],
        [{ path: `${base}/${otherReader.clientId}`, headers }, SERVICE_OPERATIONS.get],
        [{ method: 'POST', path: base, headers: asCaller(`Bearer ${token}`, json(body)), body }, SERVICE_OPERATIONS.create],
        [{ method: 'POST', path: `${base}/${otherReader.clientId}/revoke`, headers }, SERVICE_OPERATIONS.revoke],
      ]);
    });

    test('when an organization names another one’s Client ID under its own path, then it is 404 AUTHORIZATION_NOT_FOUND and its list holds only its own', async () => {
      const headers = asCaller(`Bearer ${token}`);
      const own = `/v1/organizations/${ORG}/authorizations`;
      await expectEachCredentialsAnswer({ status: 404, code: 'AUTHORIZATION_NOT_FOUND' }, [
        [{ path: `${own}/${otherReader.clientId}`, headers }, SERVICE_OPERATIONS.get],
        [{ method: 'POST', path: `${own}/${otherReader.clientId}/revoke`, headers }, SERVICE_OPERATIONS.revoke],
      ]);
      const listed = await send('credentials', { path: own, headers });
      expectAnswer('credentials', listed, { status: 200 }, SERVICE_OPERATIONS.list);
      const ids = (listed.json as { authorizations: Array<{ clientId: string; organizationId: string }> }).authorizations;
      expect(ids.map((a) => a.organizationId)).toEqual(ids.map(() => ORG));
      expect(ids.map((a) => a.clientId)).not.toContain(otherReader.clientId);
    });

    test('when a scoring engine’s token (no org claim) administers an organization, then it is 403 FORBIDDEN_ORGANIZATION', async () => {
      const engineAdmin = await signDevToken(secret, { scope: 'authorizations:write scores:write' });
      expectAnswer(
        'credentials',
        await send('credentials', { path: `/v1/organizations/${ORG}/authorizations`, headers: asCaller(`Bearer ${engineAdmin}`) }),
        { status: 403, code: 'FORBIDDEN_ORGANIZATION' },
        SERVICE_OPERATIONS.list,
      );
    });

    test('when one organization’s key is used with another’s Client ID, either way round, then it is 401 INVALID_API_KEY', async () => {
      for (const [clientId, apiKey] of [
        [otherReader.clientId, reader.apiKey],
        [reader.clientId, otherReader.apiKey],
      ]) {
        const answer = await send('readApi', { path: `/v1/customers/${clientId}/score`, headers: [['x-api-key', apiKey!]] });
        expectAnswer('readApi', answer, { status: 401, code: 'INVALID_API_KEY' }, SERVICE_OPERATIONS.score);
      }
    });

    test('when a credential asks for a resource outside its scopes, then it is 403 INSUFFICIENT_SCOPE', async () => {
      const answer = await send('readApi', { path: `/v1/customers/${reader.clientId}/pillars`, headers: [['x-api-key', reader.apiKey]] });
      expectAnswer('readApi', answer, { status: 403, code: 'INSUFFICIENT_SCOPE' }, SERVICE_OPERATIONS.pillars);
    });

    const foreignSubmissions: Array<[string, () => string]> = [
      ['another organization’s score', () => scoreBody(OTHER_ORG)],
      ['its own organization id in other capitals', () => scoreBody(ORG.toUpperCase())],
      [
        'a batch with one foreign item among its own',
        () => JSON.stringify({ scores: [JSON.parse(scoreBody()), JSON.parse(scoreBody(OTHER_ORG))] }),
      ],
      [
        'a batch of 1,000 whose last item is foreign',
        () =>
          JSON.stringify({
            scores: [...Array.from({ length: 999 }, () => JSON.parse(scoreBody()) as object), JSON.parse(scoreBody(OTHER_ORG))],
          }),
      ],
    ];

    test.each(foreignSubmissions)(
      'when an organization’s token submits %s, then it is 403 FORBIDDEN_ORGANIZATION (decision 34)',
      async (_name, make) => {
        const body = make();
        const answer = await send('scoreIngest', {
          method: 'POST',
          path: '/v1/scores',
          headers: asCaller(`Bearer ${token}`, json(body)),
          body,
        });
        expectAnswer('scoreIngest', answer, { status: 403, code: 'FORBIDDEN_ORGANIZATION' }, SERVICE_OPERATIONS.scores);
      },
    );
  });

  describe('hostile paths and Client IDs', () => {
    const cyrillic = () => `/v1/customers/${reader.clientId.slice(0, 3)}${encodeURIComponent('а')}${reader.clientId.slice(4)}/score`;
    const customerPaths: Array<[string, () => string, Expected, boolean]> = [
      ['"%2e%2e" as the Client ID', () => '/v1/customers/%2e%2e/score', { status: 400, code: 'INVALID_CLIENT_ID' }, true],
      ['an encoded traversal', () => '/v1/customers/..%2F..%2F..%2Fetc%2Fpasswd/score', { status: 400, code: 'INVALID_CLIENT_ID' }, true],
      ['a double-encoded traversal', () => '/v1/customers/%252e%252e%252f/score', { status: 400, code: 'INVALID_CLIENT_ID' }, true],
      [
        'an encoded slash after a real Client ID',
        () => `/v1/customers/${reader.clientId}%2Fscore/score`,
        { status: 400, code: 'INVALID_CLIENT_ID' },
        true,
      ],
      [
        'an encoded backslash after a real Client ID',
        () => `/v1/customers/${reader.clientId}%5C/score`,
        { status: 400, code: 'INVALID_CLIENT_ID' },
        true,
      ],
      [
        'an encoded null byte after a real Client ID',
        () => `/v1/customers/${reader.clientId}%00/score`,
        { status: 400, code: 'INVALID_CLIENT_ID' },
        true,
      ],
      [
        'an encoded right-to-left override',
        () => `/v1/customers/${reader.clientId}%E2%80%AE/score`,
        { status: 400, code: 'INVALID_CLIENT_ID' },
        true,
      ],
      ['a Cyrillic look-alike letter', cyrillic, { status: 400, code: 'INVALID_CLIENT_ID' }, true],
      [
        'full-width letters',
        () => `/v1/customers/rs_${encodeURIComponent('ａ'.repeat(24))}/score`,
        { status: 400, code: 'INVALID_CLIENT_ID' },
        true,
      ],
      ['bytes that are not UTF-8', () => '/v1/customers/rs_%FF%FE%FD/score', { status: 400, code: 'INVALID_CLIENT_ID' }, true],
      ['a truncated escape', () => '/v1/customers/rs_%E0%A4%A/score', { status: 400, code: 'INVALID_CLIENT_ID' }, true],
      [
        '65 characters after the prefix',
        () => `/v1/customers/rs_${'a'.repeat(65)}/score`,
        { status: 400, code: 'INVALID_CLIENT_ID' },
        true,
      ],
      ['8,000 characters', () => `/v1/customers/rs_${'a'.repeat(8000)}/score`, { status: 400, code: 'INVALID_CLIENT_ID' }, true],
      [
        'the prefix in capitals',
        () => `/v1/customers/${reader.clientId.replace(/^rs_/, 'RS_')}/score`,
        { status: 400, code: 'INVALID_CLIENT_ID' },
        true,
      ],
      [
        'a real Client ID in other capitals',
        () => `/v1/customers/rs_${swapCase(reader.clientId.slice(3))}/score`,
        { status: 404, code: 'CREDENTIAL_NOT_FOUND' },
        true,
      ],
      ['only encoded whitespace', () => '/v1/customers/%20%09/score', { status: 400, code: 'MISSING_CLIENT_ID' }, true],
      ['an empty segment', () => '/v1/customers//score', { status: 400, code: 'MISSING_CLIENT_ID' }, true],
      [
        'the Client ID in the query instead',
        () => `/v1/customers/score?clientId=${reader.clientId}`,
        { status: 400, code: 'MISSING_CLIENT_ID' },
        true,
      ],
      [
        'dot segments around a real Client ID',
        () => `/v1/customers/../customers/${reader.clientId}/score`,
        { status: 404, code: 'ROUTE_NOT_FOUND' },
        false,
      ],
      ['a raw traversal', () => '/v1/customers/../../../../etc/passwd', { status: 404, code: 'ROUTE_NOT_FOUND' }, false],
      ['a path longer than the header limit', () => `/v1/customers/rs_${'a'.repeat(20_000)}/score`, { status: 431 }, false],
      ['a raw null byte', () => `/v1/customers/${reader.clientId}\u0000/score`, { status: 400 }, false],
      ['a raw space', () => `/v1/customers/rs_a b/score`, { status: 400 }, false],
    ];

    test.each(customerPaths)('when the read API gets %s, then it is refused as documented', async (_name, path, expected, isOperation) => {
      const answer = await send('readApi', { path: path(), headers: [['x-api-key', reader.apiKey]] });
      expectAnswer('readApi', answer, expected, isOperation ? SERVICE_OPERATIONS.score : undefined);
    });

    test('when the read API gets a path with raw (unencoded) UTF-8 bytes, then it is 400 and never served', async () => {
      const head = Buffer.concat([
        Buffer.from('GET /v1/customers/rs_', 'latin1'),
        Buffer.from('ääääääääääää', 'utf8'),
        Buffer.from(`/score HTTP/1.1\r\nHost: x\r\nConnection: close\r\nx-api-key: ${reader.apiKey}\r\n\r\n`, 'latin1'),
      ]);
      const answer = await send('readApi', head);
      expect(answer.status).toBe(400);
      expectAnswer('readApi', answer, { status: 400, code: answer.json?.code === undefined ? undefined : 'INVALID_CLIENT_ID' });
    });

    const organizationPaths: Array<[string, () => string, Expected, Operation | undefined]> = [
      [
        'an encoded traversal as the organization',
        () => `/v1/organizations/..%2F${OTHER_ORG}/authorizations`,
        { status: 400, code: 'INVALID_ORGANIZATION_ID' },
        SERVICE_OPERATIONS.list,
      ],
      [
        'an encoded slash after the organization',
        () => `/v1/organizations/${ORG}%2F..%2F${OTHER_ORG}/authorizations`,
        { status: 400, code: 'INVALID_ORGANIZATION_ID' },
        SERVICE_OPERATIONS.list,
      ],
      [
        'an encoded null byte after the organization',
        () => `/v1/organizations/${ORG}%00/authorizations`,
        { status: 400, code: 'INVALID_ORGANIZATION_ID' },
        SERVICE_OPERATIONS.list,
      ],
      [
        'a Unicode organization id',
        () => `/v1/organizations/${encodeURIComponent(`${ORG}é`)}/authorizations`,
        { status: 400, code: 'INVALID_ORGANIZATION_ID' },
        SERVICE_OPERATIONS.list,
      ],
      [
        '65 characters of organization id',
        () => `/v1/organizations/${'a'.repeat(65)}/authorizations`,
        { status: 400, code: 'INVALID_ORGANIZATION_ID' },
        SERVICE_OPERATIONS.list,
      ],
      [
        'bytes that are not UTF-8 as the organization',
        () => '/v1/organizations/%FF%FE/authorizations',
        // Express decodes path parameters before any handler runs; a malformed one is 400 (docs/decisions/0050-authority-follows-the-live-key.md).
        { status: 400, code: 'VALIDATION_FAILED' },
        SERVICE_OPERATIONS.list,
      ],
      [
        'an encoded traversal as the Client ID',
        () => `/v1/organizations/${ORG}/authorizations/..%2F..%2F${OTHER_ORG}`,
        { status: 404, code: 'AUTHORIZATION_NOT_FOUND' },
        SERVICE_OPERATIONS.get,
      ],
      [
        'an encoded null byte as the Client ID',
        () => `/v1/organizations/${ORG}/authorizations/${reader.clientId}%00`,
        { status: 404, code: 'AUTHORIZATION_NOT_FOUND' },
        SERVICE_OPERATIONS.get,
      ],
      [
        '8,000 characters of Client ID',
        () => `/v1/organizations/${ORG}/authorizations/rs_${'a'.repeat(8000)}`,
        { status: 404, code: 'AUTHORIZATION_NOT_FOUND' },
        SERVICE_OPERATIONS.get,
      ],
      [
        'a MongoDB operator as the Client ID',
        () => `/v1/organizations/${ORG}/authorizations/%24where`,
        { status: 404, code: 'AUTHORIZATION_NOT_FOUND' },
        SERVICE_OPERATIONS.get,
      ],
      [
        'bytes that are not UTF-8 as the Client ID',
        () => `/v1/organizations/${ORG}/authorizations/%FF%FE`,
        { status: 400, code: 'VALIDATION_FAILED' },
        SERVICE_OPERATIONS.get,
      ],
      [
        'a raw traversal to another organization',
        () => `/v1/organizations/${ORG}/../${OTHER_ORG}/authorizations`,
        { status: 404, code: 'ROUTE_NOT_FOUND' },
        undefined,
      ],
    ];

    test.each(organizationPaths)(
      'when the credentials service gets %s, then it is refused as documented',
      async (_name, path, expected, operation) => {
        const answer = await send('credentials', { path: path(), headers: asCaller(`Bearer ${token}`) });
        expectAnswer('credentials', answer, expected, operation);
      },
    );

    test('when a hostile Client ID is revoked, then it is 404 AUTHORIZATION_NOT_FOUND and nothing else changes', async () => {
      for (const clientId of [`..%2F${otherReader.clientId}`, `${reader.clientId}%00`, `rs_${'b'.repeat(8000)}`]) {
        const answer = await send('credentials', {
          method: 'POST',
          path: `/v1/organizations/${ORG}/authorizations/${clientId}/revoke`,
          headers: asCaller(`Bearer ${token}`),
        });
        expectAnswer('credentials', answer, { status: 404, code: 'AUTHORIZATION_NOT_FOUND' }, SERVICE_OPERATIONS.revoke);
      }
      const undecodable = await send('credentials', {
        method: 'POST',
        path: `/v1/organizations/${ORG}/authorizations/%FF/revoke`,
        headers: asCaller(`Bearer ${token}`),
      });
      expectAnswer('credentials', undecodable, { status: 400, code: 'VALIDATION_FAILED' }, SERVICE_OPERATIONS.revoke);
      expect((await readScore(reader)).status).toBe(200);
    });

    test.each([['/v1/scores/..'], ['/v1/%2e%2e/scores'], ['/v1/scores%00'], ['/v1/scores/../../etc/passwd']])(
      'when score ingest gets %s, then it is 404 ROUTE_NOT_FOUND',
      async (path) => {
        const body = scoreBody();
        const answer = await send('scoreIngest', { method: 'POST', path, headers: asCaller(`Bearer ${token}`, json(body)), body });
        expectAnswer('scoreIngest', answer, { status: 404, code: 'ROUTE_NOT_FOUND' });
      },
    );
  });

  describe('a malformed percent-encoding in any path (decision 50)', () => {
    const truncated = '%E0%A4%A';
    const refused: Expected = { status: 400, code: 'VALIDATION_FAILED' };
    const withKey = (apiKey: string): Array<[string, string]> => [['x-api-key', apiKey]];
    const paths: Array<[string, Service, () => RawRequest, Expected, Operation | undefined]> = [
      ['an unknown path', 'readApi', () => ({ path: `/v1/${truncated}` }), refused, undefined],
      ['a portfolio path', 'readApi', () => ({ path: `/v1/portfolio/${truncated}`, headers: withKey(reader.apiKey) }), refused, undefined],
      ['a file of the API reference', 'readApi', () => ({ path: '/docs/%FF' }), refused, undefined],
      ['an unknown path', 'credentials', () => ({ path: `/v1/${truncated}`, headers: asCaller(`Bearer ${token}`) }), refused, undefined],
      [
        'a claim link',
        'credentials',
        () => ({ path: `/claim/${truncated}`, headers: [['Accept', 'application/json']] }),
        refused,
        { method: 'GET', template: '/claim/{token}' },
      ],
      ['a file of the API reference', 'credentials', () => ({ path: '/docs/%FF' }), refused, undefined],
      ['the scores path', 'scoreIngest', () => ({ method: 'POST', path: `/v1/scores${truncated}` }), refused, undefined],
      ['a file of the API reference', 'scoreIngest', () => ({ path: `/docs/${truncated}` }), refused, undefined],
      [
        'the organization of its alert webhooks',
        'notifier',
        () => ({ path: `/v1/organizations/${truncated}/webhooks`, headers: asCaller(`Bearer ${token}`) }),
        refused,
        SERVICE_OPERATIONS.organizationWebhooks,
      ],
      [
        'an alert webhook’s id',
        'notifier',
        () => ({ method: 'POST', path: `/v1/organizations/${ORG}/webhooks/%FF/test`, headers: asCaller(`Bearer ${token}`) }),
        refused,
        SERVICE_OPERATIONS.organizationWebhookTest,
      ],
      [
        'a grant webhook’s id',
        'notifier',
        () => ({ path: `/v1/customers/${reader.clientId}/webhooks/${truncated}/deliveries`, headers: withKey(reader.apiKey) }),
        refused,
        SERVICE_OPERATIONS.grantWebhookDeliveries,
      ],
      [
        'a portfolio webhook’s id',
        'notifier',
        () => ({ method: 'DELETE', path: `/v1/portfolio/webhooks/${truncated}`, headers: withKey('rsa_unknown') }),
        refused,
        SERVICE_OPERATIONS.portfolioWebhook,
      ],
      // A Client ID keeps the read API's documented answer: it is not in the expected format (decision 6, step 3).
      [
        'a grant’s Client ID',
        'notifier',
        () => ({ path: `/v1/customers/rs_${truncated}/webhooks`, headers: withKey(reader.apiKey) }),
        { status: 400, code: 'INVALID_CLIENT_ID' },
        SERVICE_OPERATIONS.grantWebhooks,
      ],
      ['an unknown path', 'notifier', () => ({ path: `/v1/${truncated}` }), refused, undefined],
      ['a file of the API reference', 'notifier', () => ({ path: '/docs/%FF%FE' }), refused, undefined],
    ];

    test.each(paths)(
      'when %s on the %s holds one, then it is refused as documented, never a 5xx',
      async (_name, service, make, expected, operation) => {
        const answer = await send(service, make());
        expectAnswer(service, answer, expected, operation);
        if (expected.code === 'VALIDATION_FAILED') expect(answer.json?.details).toEqual([{ path: 'path', message: expect.any(String) }]);
      },
    );

    test('when a console path holds one, then it is a 400 page, never a 5xx', async () => {
      const answer = await send('console', { path: `/console/${truncated}`, headers: [['Accept', 'text/html']] });
      expect(answer.status).toBe(400);
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.body).not.toMatch(INTERNALS);
    });
  });

  describe('names with bidirectional and other format characters (decision 50)', () => {
    const names: Array<[string, string]> = [
      ['a right-to-left override (U+202E)', 'Acme\u202Ekcab'],
      ['a right-to-left isolate (U+2067)', 'Acme \u2067Ltd\u2069'],
      ['a zero-width space (U+200B)', 'Ac\u200Bme'],
      ['a byte order mark inside (U+FEFF)', 'Ac\uFEFFme'],
      ['a language tag (U+E0001)', 'Acme\u{E0001}'],
    ];

    test.each(names)(
      'when an authorization is created with %s in its recipient name, then it is 400 VALIDATION_FAILED naming recipientName',
      async (_name, name) => {
        const body = JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], recipientName: name });
        const answer = await send('credentials', {
          method: 'POST',
          path: `/v1/organizations/${ORG}/authorizations`,
          headers: asCaller(`Bearer ${token}`, json(body)),
          body,
        });
        expectAnswer('credentials', answer, { status: 400, code: 'VALIDATION_FAILED' }, SERVICE_OPERATIONS.create);
        expect(answer.json?.details).toEqual([{ path: 'recipientName', message: expect.stringContaining('format characters') }]);
      },
    );

    test('when a grant is claimed into a new account named with a right-to-left override, then it is 400 VALIDATION_FAILED naming accountName, and the link still claims', async () => {
      const claimPath = await aClaimPath();
      const claim = (accountName: string) =>
        send('credentials', {
          method: 'POST',
          path: claimPath,
          headers: [
            ['Content-Type', 'application/json'],
            ['Accept', 'application/json'],
          ],
          // Escaped in the JSON text this time: the parser's \u202e is the same character.
          body: `{"into":"account","accountName":${JSON.stringify(accountName).replace('\u202E', '\\u202e')}}`,
        });
      const refusedClaim = await claim('Acme\u202Ekcab');
      expectAnswer('credentials', refusedClaim, { status: 400, code: 'VALIDATION_FAILED' }, { method: 'POST', template: '/claim/{token}' });
      expect(refusedClaim.json?.details).toEqual([{ path: 'accountName', message: expect.stringContaining('format characters') }]);
      expectAnswer('credentials', await claim('Acme'), { status: 201 }, { method: 'POST', template: '/claim/{token}' });
    });
  });

  describe('pages cannot be framed (decision 50)', () => {
    const framingRefused = (answer: RawResponse) => ({
      csp: answer.headers['content-security-policy']?.split(/;\s*/),
      frameOptions: answer.headers['x-frame-options'],
    });
    const expectedHeaders = {
      csp: expect.arrayContaining(["default-src 'none'", "frame-ancestors 'none'", "script-src 'self'", "base-uri 'none'"]),
      frameOptions: 'DENY',
    };

    test.each(SERVICES)(
      "when %s's API reference and its files are asked for, then each answer carries the page policy",
      async (service) => {
        for (const path of ['/docs', '/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/docs-init.js', '/docs/no-such-file']) {
          const answer = await send(service, { path });
          expect({ path, ...framingRefused(answer) }).toEqual({ path, ...expectedHeaders });
        }
      },
    );

    test('when console pages and a claim page are asked for, then each carries the page policy', async () => {
      const claimPath = await aClaimPath();
      for (const path of ['/console', '/console/sign-in', '/console/no-such-page', claimPath, '/claim/unknown-link']) {
        const answer = await send('console', { path, headers: [['Accept', 'text/html']] });
        expect(answer.status).toBeLessThan(500);
        expect({ path, ...framingRefused(answer) }).toEqual({ path, ...expectedHeaders });
      }
    });
  });

  describe('an organization’s webhook management is limited like a recipient’s (decision 50)', () => {
    test(`when an organization makes ${ORGANIZATION_LIMIT + 1} webhook requests within a minute, then the last is 429 with Retry-After and its RateLimit headers; strangers spent none of it, and others go on`, async () => {
      const limited = `hostile-c-${runId}`;
      const own = await signDevToken(secret, { org: limited, scope: 'authorizations:write' });
      const list = (bearer: string, org = limited) =>
        send('notifier', { path: `/v1/organizations/${org}/webhooks`, headers: asCaller(`Bearer ${bearer}`) });
      const testDelivery = () =>
        send('notifier', {
          method: 'POST',
          path: `/v1/organizations/${limited}/webhooks/wh_${'0'.repeat(16)}/test`,
          headers: asCaller(`Bearer ${own}`),
        });
      const forged = hmacJwt({ alg: 'HS256' }, { ...claims(), org: limited }, randomBytes(32).toString('base64url'));
      // Strangers first: a forged token for the organization, and another organization's token.
      for (let attempt = 0; attempt < 5; attempt += 1) {
        expectAnswer('notifier', await list(forged), { status: 401, code: 'INVALID_TOKEN' }, SERVICE_OPERATIONS.organizationWebhooks);
        expectAnswer(
          'notifier',
          await list(otherToken),
          { status: 403, code: 'FORBIDDEN_ORGANIZATION' },
          SERVICE_OPERATIONS.organizationWebhooks,
        );
      }

      const remaining: string[] = [];
      for (let request = 1; request <= ORGANIZATION_LIMIT; request += 1) {
        // Lists and test deliveries (to a webhook it does not have) alike: every management request counts.
        const answer = request % 2 === 1 ? await list(own) : await testDelivery();
        if (request % 2 === 1) expectAnswer('notifier', answer, { status: 200 }, SERVICE_OPERATIONS.organizationWebhooks);
        else expectAnswer('notifier', answer, { status: 404, code: 'WEBHOOK_NOT_FOUND' }, SERVICE_OPERATIONS.organizationWebhookTest);
        remaining.push(/^"organization"; r=(\d+); t=\d+$/.exec(answer.headers.ratelimit ?? '')?.[1] ?? answer.headers.ratelimit ?? 'none');
      }
      expect(remaining).toEqual(Array.from({ length: ORGANIZATION_LIMIT }, (_, index) => String(ORGANIZATION_LIMIT - 1 - index)));

      for (const over of [await list(own), await testDelivery()]) {
        expectAnswer('notifier', over, { status: 429 }, SERVICE_OPERATIONS.organizationWebhooks);
        expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(over.headers.ratelimit).toMatch(/^"organization"; r=0; t=\d+$/);
        expect(over.headers['ratelimit-policy']).toMatch(new RegExp(`^"organization"; q=${ORGANIZATION_LIMIT}; w=60; pk=:[^:]+:$`));
      }
      // Another organization's webhooks, and the organization's own grants in the credentials service, go on.
      expectAnswer('notifier', await list(token, ORG), { status: 200 }, SERVICE_OPERATIONS.organizationWebhooks);
      const grants = await send('credentials', { path: `/v1/organizations/${limited}/authorizations`, headers: asCaller(`Bearer ${own}`) });
      expectAnswer('credentials', grants, { status: 200 }, SERVICE_OPERATIONS.list);
    });
  });

  describe('oversized, deeply nested and malformed bodies', () => {
    const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const valid = JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'] });

    const creates: Array<[string, () => Omit<RawRequest, 'path'>, Expected]> = [
      [
        '17 KB (the limit is 16 KB)',
        () => ({ body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'], recipientName: 'x'.repeat(17_000) }) }),
        { status: 413, code: 'PAYLOAD_TOO_LARGE' },
      ],
      [
        // body-parser reads off a refused body before answering: the request timeout ends the wait.
        'a Content-Length of a gigabyte and a few bytes sent',
        () => ({ headers: [['Content-Length', '1000000000']], body: valid }),
        { status: 408 },
      ],
      [
        '20 KB in chunks, without a length',
        () => ({ headers: [['Transfer-Encoding', 'chunked']], body: chunked(JSON.stringify({ recipientName: 'y'.repeat(20_000) })) }),
        { status: 413, code: 'PAYLOAD_TOO_LARGE' },
      ],
      [
        'arrays nested 7,000 deep in a field',
        () => ({ body: `{"recipientType":"auditor","scopes":["qr_score"],"recipientName":${nestedArrays(7000)}}` }),
        { status: 400, code: 'VALIDATION_FAILED' },
      ],
      ['objects nested 2,500 deep', () => ({ body: nestedObjects(2500) }), { status: 400, code: 'VALIDATION_FAILED' }],
      [
        'scopes smuggled through __proto__',
        () => ({ body: '{"recipientType":"auditor","__proto__":{"scopes":["qr_score","score_trend","pillar_breakdown"]}}' }),
        { status: 400, code: 'VALIDATION_FAILED' },
      ],
      ['truncated JSON', () => ({ body: valid.slice(0, -3) }), { status: 400, code: 'MALFORMED_JSON' }],
      [
        'bytes that are not UTF-8',
        () => ({ body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) }),
        { status: 400, code: 'MALFORMED_JSON' },
      ],
      [
        'JSON sent as text/plain',
        () => ({ headers: [['Content-Type', 'text/plain']], body: valid }),
        { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
      ],
      [
        'JSON declared as UTF-16 (decoded as such, then not JSON)',
        () => ({ headers: [['Content-Type', 'application/json; charset=utf-16']], body: valid }),
        { status: 400, code: 'MALFORMED_JSON' },
      ],
      [
        'JSON declared as Latin-1',
        () => ({ headers: [['Content-Type', 'application/json; charset=iso-8859-1']], body: valid }),
        { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
      ],
    ];

    test.each(creates)('when an authorization is created with %s, then it is refused as documented', async (_name, make, expected) => {
      const request = make();
      const headers = request.headers?.some(([name]) => name === 'Content-Type')
        ? request.headers
        : [...json('x'), ...(request.headers ?? [])];
      const started = performance.now();
      const answer = await send('credentials', {
        method: 'POST',
        path: `/v1/organizations/${ORG}/authorizations`,
        body: request.body,
        headers: asCaller(`Bearer ${token}`, headers),
      });
      // 408 comes from the HTTP layer (no code, not an operation's answer), within the request timeout's bound.
      expectAnswer('credentials', answer, expected, expected.status === 408 ? undefined : SERVICE_OPERATIONS.create);
      if (expected.status === 408) expect(performance.now() - started).toBeLessThan(REQUEST_TIMEOUT_MS + 2000);
    });

    const submissions: Array<[string, () => Omit<RawRequest, 'path'>, Expected]> = [
      [
        '2.1 MB (the limit is 2 MB)',
        () => ({ body: JSON.stringify({ scores: [JSON.parse(scoreBody())], padding: 'p'.repeat(2_100_000) }) }),
        { status: 413, code: 'PAYLOAD_TOO_LARGE' },
      ],
      [
        '3 MB in chunks, without a length',
        () => ({ headers: [['Transfer-Encoding', 'chunked']], body: chunked(JSON.stringify({ padding: 'p'.repeat(3_000_000) })) }),
        { status: 413, code: 'PAYLOAD_TOO_LARGE' },
      ],
      ['arrays nested 500,000 deep', () => ({ body: `{"scores":${nestedArrays(500_000)}}` }), { status: 400, code: 'VALIDATION_FAILED' }],
      ['objects nested 200,000 deep', () => ({ body: nestedObjects(200_000) }), { status: 400, code: 'VALIDATION_FAILED' }],
      [
        'objects nested 100,000 deep inside a score',
        () => ({ body: scoreBody().replace('"score":13', `"score":${nestedObjects(100_000)}`) }),
        { status: 400, code: 'VALIDATION_FAILED' },
      ],
      [
        '1,001 scores (the limit is 1,000)',
        () => ({ body: JSON.stringify({ scores: Array.from({ length: 1001 }, () => JSON.parse(scoreBody()) as object) }) }),
        { status: 400, code: 'VALIDATION_FAILED' },
      ],
      [
        '1,000 scores that are all wrong',
        () => ({
          body: JSON.stringify({ scores: Array.from({ length: 1000 }, () => ({ organizationId: '../..', score: -1, grade: {} })) }),
        }),
        { status: 400, code: 'VALIDATION_FAILED' },
      ],
      [
        'a number beyond double precision',
        () => ({ body: scoreBody().replace('"score":13', '"score":1e400') }),
        { status: 400, code: 'VALIDATION_FAILED' },
      ],
      ['a JSON string instead of an object', () => ({ body: '"scores"' }), { status: 400, code: 'MALFORMED_JSON' }],
    ];

    test.each(submissions)(
      'when scores are submitted with %s, then it is refused as documented',
      async (_name, make, expected) => {
        const request = make();
        const answer = await send('scoreIngest', {
          method: 'POST',
          path: '/v1/scores',
          body: request.body,
          headers: asCaller(`Bearer ${token}`, [...json('x'), ...(request.headers ?? [])]),
        });
        expectAnswer('scoreIngest', answer, expected, SERVICE_OPERATIONS.scores);
      },
      30_000,
    );
  });

  describe('header floods', () => {
    const services = ['readApi', 'credentials', 'scoreIngest'] as const;
    const flood = (count: number): Array<[string, string]> => Array.from({ length: count }, (_, i) => [`X-Flood-${i}`, `value-${i}`]);

    test.each(services)(
      'when %s gets 1,000 headers, one 32 KB header or a 17 KB cookie, then it is 431 without a code, and 200 small headers are served',
      async (service) => {
        for (const headers of [flood(1000), [['X-Huge', 'h'.repeat(32_000)]], [['Cookie', `session=${'c'.repeat(17_000)}`]]] as Array<
          Array<[string, string]>
        >) {
          expectAnswer(service, await send(service, { path: '/healthz', headers }), { status: 431 });
        }
        expectAnswer(service, await send(service, { path: '/healthz', headers: flood(200) }), { status: 200 });
      },
    );

    test('when credentials are huge or repeated, then they are refused as invalid, not as errors', async () => {
      const key = await send('readApi', {
        path: `/v1/customers/${reader.clientId}/score`,
        headers: [['x-api-key', `rsk_${'k'.repeat(12_000)}`]],
      });
      expectAnswer('readApi', key, { status: 401, code: 'INVALID_API_KEY' }, SERVICE_OPERATIONS.score);
      const twice = await send('readApi', {
        path: `/v1/customers/${reader.clientId}/score`,
        headers: [
          ['x-api-key', reader.apiKey],
          ['x-api-key', reader.apiKey],
        ],
      });
      expectAnswer('readApi', twice, { status: 401, code: 'INVALID_API_KEY' }, SERVICE_OPERATIONS.score);
      const bearer = await send('credentials', {
        path: `/v1/organizations/${ORG}/authorizations`,
        headers: asCaller(`Bearer ${'t'.repeat(12_000)}`),
      });
      expectAnswer('credentials', bearer, { status: 401, code: 'INVALID_TOKEN' }, SERVICE_OPERATIONS.list);
    });
  });

  describe('offers to recipient accounts (decision 50)', () => {
    const OFFER_OPERATIONS = {
      list: { method: 'GET', template: '/portfolio/offers' },
      accept: { method: 'POST', template: '/portfolio/offers/{clientId}/accept' },
      decline: { method: 'POST', template: '/portfolio/offers/{clientId}/decline' },
      getAutoAccept: { method: 'GET', template: '/portfolio/auto-accept' },
      setAutoAccept: { method: 'PUT', template: '/portfolio/auto-accept' },
    } as const satisfies Record<string, Operation>;
    type Account = { accountId: string; accountKey: string };
    let holder: Account;
    let stranger: Account;
    let offered: string;

    const asAccount = (account: Account, extra: Array<[string, string]> = []): Array<[string, string]> => [
      ['x-api-key', account.accountKey],
      ...extra,
    ];
    const answerOffer = (account: Account, clientId: string, answer: 'accept' | 'decline') =>
      send('credentials', { method: 'POST', path: `/v1/portfolio/offers/${clientId}/${answer}`, headers: asAccount(account) });
    const offersOf = async (account: Account) =>
      (
        (await send('credentials', { path: '/v1/portfolio/offers', headers: asAccount(account) })).json as { items: { clientId: string }[] }
      ).items.map((item) => item.clientId);
    const autoAcceptOf = async (account: Account) =>
      (await send('credentials', { path: '/v1/portfolio/auto-accept', headers: asAccount(account) })).json;

    /** A new recipient account, opened by claiming a link of `org` into it. */
    async function anAccount(org: string, bearer: string): Promise<Account> {
      const claim = JSON.stringify({ into: 'account' });
      const opened = await send('credentials', { method: 'POST', path: await aClaimPath(org, bearer), headers: json(claim), body: claim });
      expect(opened.status).toBe(201);
      return opened.json as Account;
    }

    beforeAll(async () => {
      holder = await anAccount(ORG, token);
      stranger = await anAccount(OTHER_ORG, otherToken);
      const body = JSON.stringify({
        recipientType: 'auditor',
        scopes: ['qr_score'],
        keyDelivery: 'account',
        recipientAccountId: holder.accountId,
      });
      const path = `/v1/organizations/${ORG}/authorizations`;
      const created = await send('credentials', { method: 'POST', path, headers: asCaller(`Bearer ${token}`, json(body)), body });
      expectAnswer('credentials', created, { status: 201 }, SERVICE_OPERATIONS.create);
      expect(created.json).toMatchObject({ status: 'pending', recipientAccountName: null });
      offered = (created.json as { clientId: string }).clientId;
    }, 60_000);

    test("when another account lists, accepts or declines an account's offer, then it sees none, and each answer is 404 OFFER_NOT_FOUND", async () => {
      const listed = await send('credentials', { path: '/v1/portfolio/offers', headers: asAccount(stranger) });
      expectAnswer('credentials', listed, { status: 200 }, OFFER_OPERATIONS.list);
      expect(listed.json).toEqual({ items: [], nextCursor: null });
      for (const answer of ['accept', 'decline'] as const) {
        expectAnswer(
          'credentials',
          await answerOffer(stranger, offered, answer),
          { status: 404, code: 'OFFER_NOT_FOUND' },
          OFFER_OPERATIONS[answer],
        );
        // Nor do grants that were never offered to the account: another organization's, and one with a key of its own.
        for (const clientId of [reader.clientId, otherReader.clientId]) {
          expectAnswer(
            'credentials',
            await answerOffer(holder, clientId, answer),
            { status: 404, code: 'OFFER_NOT_FOUND' },
            OFFER_OPERATIONS[answer],
          );
        }
      }
      expect(await offersOf(holder)).toEqual([offered]);
    });

    test('when the offers are asked for with no account key, or a forged one, then each is 401 and nothing changes', async () => {
      const forged = { accountId: holder.accountId, accountKey: `rsa_${'A'.repeat(43)}` };
      const body = JSON.stringify({ organizationIds: [ORG] });
      for (const [headers, code] of [
        [[], 'MISSING_API_KEY'],
        [asAccount(forged), 'INVALID_API_KEY'],
      ] as const) {
        const requests: Array<[RawRequest, Operation]> = [
          [{ path: '/v1/portfolio/offers', headers: [...headers] }, OFFER_OPERATIONS.list],
          [{ method: 'POST', path: `/v1/portfolio/offers/${offered}/accept`, headers: [...headers] }, OFFER_OPERATIONS.accept],
          [{ method: 'POST', path: `/v1/portfolio/offers/${offered}/decline`, headers: [...headers] }, OFFER_OPERATIONS.decline],
          [{ path: '/v1/portfolio/auto-accept', headers: [...headers] }, OFFER_OPERATIONS.getAutoAccept],
          [
            { method: 'PUT', path: '/v1/portfolio/auto-accept', headers: [...headers, ...json(body)], body },
            OFFER_OPERATIONS.setAutoAccept,
          ],
        ];
        for (const [request, operation] of requests)
          expectAnswer('credentials', await send('credentials', request), { status: 401, code }, operation);
      }
      expect(await offersOf(holder)).toEqual([offered]);
      expect(await autoAcceptOf(holder)).toEqual({ organizationIds: [] });
    });

    const hostileOfferIds: Array<[string, () => string, Expected, boolean]> = [
      ['an encoded traversal to another grant', () => `..%2F${otherReader.clientId}`, { status: 404, code: 'OFFER_NOT_FOUND' }, true],
      ['an encoded null byte after the real one', () => `${offered}%00`, { status: 404, code: 'OFFER_NOT_FOUND' }, true],
      ['an encoded right-to-left override after the real one', () => `${offered}%E2%80%AE`, { status: 404, code: 'OFFER_NOT_FOUND' }, true],
      ['the real one in other capitals', () => `rs_${swapCase(offered.slice(3))}`, { status: 404, code: 'OFFER_NOT_FOUND' }, true],
      ['8,000 characters', () => `rs_${'a'.repeat(8000)}`, { status: 404, code: 'OFFER_NOT_FOUND' }, true],
      ['something that is no Client ID', () => 'not-a-client-id', { status: 404, code: 'OFFER_NOT_FOUND' }, true],
      ['a truncated escape', () => 'rs_%E0%A4%A', { status: 400, code: 'VALIDATION_FAILED' }, false],
    ];

    test.each(hostileOfferIds)(
      'when the account answers an offer named by %s, then it is refused as documented and the offer still waits',
      async (_name, clientId, expected, isOperation) => {
        for (const answer of ['accept', 'decline'] as const) {
          expectAnswer(
            'credentials',
            await answerOffer(holder, clientId(), answer),
            expected,
            isOperation ? OFFER_OPERATIONS[answer] : undefined,
          );
        }
        expect(await offersOf(holder)).toEqual([offered]);
      },
    );

    const autoAcceptBodies: Array<[string, () => string, Expected]> = [
      [
        '1,001 organizations (the limit is 1,000)',
        () => JSON.stringify({ organizationIds: Array.from({ length: 1001 }, (_, i) => `org-${i}`) }),
        { status: 400, code: 'VALIDATION_FAILED' },
      ],
      [
        '100 KB (the limit is 96 KB)',
        () => JSON.stringify({ organizationIds: ['x'.repeat(100_000)] }),
        { status: 413, code: 'PAYLOAD_TOO_LARGE' },
      ],
      [
        'an organization id with a right-to-left override',
        () => JSON.stringify({ organizationIds: [`${OTHER_ORG}\u202e`] }),
        { status: 400, code: 'VALIDATION_FAILED' },
      ],
      [
        'an organization id of 65 characters',
        () => JSON.stringify({ organizationIds: ['a'.repeat(65)] }),
        { status: 400, code: 'VALIDATION_FAILED' },
      ],
      ['the same organization twice', () => JSON.stringify({ organizationIds: [ORG, ORG] }), { status: 400, code: 'VALIDATION_FAILED' }],
      [
        'arrays nested 20,000 deep',
        () => `{"organizationIds":${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
        { status: 400, code: 'VALIDATION_FAILED' },
      ],
      ['ids smuggled through __proto__', () => `{"__proto__":{"organizationIds":["${ORG}"]}}`, { status: 400, code: 'VALIDATION_FAILED' }],
      ['truncated JSON', () => `{"organizationIds":["${ORG}"`, { status: 400, code: 'MALFORMED_JSON' }],
    ];

    test.each(autoAcceptBodies)(
      'when an account sets the organizations it accepts automatically to %s, then it is refused as documented and the list stays as it was',
      async (_name, make, expected) => {
        const body = make();
        const answer = await send('credentials', {
          method: 'PUT',
          path: '/v1/portfolio/auto-accept',
          headers: asAccount(holder, json(body)),
          body,
        });
        expectAnswer('credentials', answer, expected, OFFER_OPERATIONS.setAutoAccept);
        expect(await autoAcceptOf(holder)).toEqual({ organizationIds: [] });
      },
    );

    test("when another account trusts the organization, then that is its own list: the organization's next offer to the account still waits", async () => {
      const body = JSON.stringify({ organizationIds: [ORG] });
      const set = await send('credentials', {
        method: 'PUT',
        path: '/v1/portfolio/auto-accept',
        headers: asAccount(stranger, json(body)),
        body,
      });
      expectAnswer('credentials', set, { status: 200 }, OFFER_OPERATIONS.setAutoAccept);

      const offer = JSON.stringify({
        recipientType: 'partner',
        scopes: ['qr_score'],
        keyDelivery: 'account',
        recipientAccountId: holder.accountId,
      });
      const path = `/v1/organizations/${ORG}/authorizations`;
      const created = await send('credentials', { method: 'POST', path, headers: asCaller(`Bearer ${token}`, json(offer)), body: offer });

      expect(created.json).toMatchObject({ status: 'pending' });
      expect(await autoAcceptOf(holder)).toEqual({ organizationIds: [] });
      // What every refused request above tried left the first offer to the account alone: it accepts it now.
      expectAnswer('credentials', await answerOffer(holder, offered, 'accept'), { status: 200 }, OFFER_OPERATIONS.accept);
      expect(await offersOf(holder)).toEqual([(created.json as { clientId: string }).clientId]);
    });
  });

  describe('after all of that', () => {
    test('when the organizations then post scores as engines do, then those are the latest: no refused write was ever emitted, no refused revoke took effect', async () => {
      for (const [org, score] of [
        [ORG, 41],
        [OTHER_ORG, 42],
      ] as const) {
        const body = JSON.stringify(aScoreSubmission({ organizationId: org, scoreDate: FINAL, score }));
        const posted = await send('scoreIngest', {
          method: 'POST',
          path: '/v1/scores',
          headers: asCaller(`Bearer ${engineToken}`, json(body)),
          body,
        });
        expectAnswer('scoreIngest', posted, { status: 202 }, SERVICE_OPERATIONS.scores);
      }
      for (const [credential, score] of [
        [reader, 41],
        [otherReader, 42],
      ] as const) {
        const latest = await eventually(
          async () => {
            const answer = await readScore(credential);
            return answer.status === 200 && answer.json?.scoreDate !== INITIAL ? answer : undefined;
          },
          30_000,
          100,
        );
        expectAnswer('readApi', latest, { status: 200 }, SERVICE_OPERATIONS.score);
        expect(latest.json).toMatchObject({ scoreDate: FINAL, score });
      }
    }, 60_000);
  });
}

function swapCase(text: string): string {
  return [...text].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
}

function chunked(body: string): string {
  const size = 8192;
  let out = '';
  for (let at = 0; at < body.length; at += size) {
    const piece = body.slice(at, at + size);
    out += `${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`;
  }
  return `${out}0\r\n\r\n`;
}
