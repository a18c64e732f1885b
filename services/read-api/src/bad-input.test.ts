import http from 'node:http';
import { request, type JsonResponse, type RunningApp } from '@rsd/testkit';
import { issueCredential, recordScore, type IssuedCredential } from './testing/read-api-fixtures';
import { startReadApi } from './testing/read-api-harness';

let running: RunningApp;
let credential: IssuedCredential;

/** Every response of this file is checked: no stack trace, no error class, no file paths. */
function expectNoInternals(text: string): void {
  expect(text).not.toMatch(/stack|Error:|at .+\(.+:\d+:\d+\)|node_modules|\.ts:\d+/);
}

beforeAll(async () => {
  const readApi = await startReadApi();
  running = readApi;
  credential = await issueCredential(readApi.views);
  await recordScore(readApi.views);
});

afterAll(async () => {
  await running.close();
});

async function call(path: string, init: RequestInit = {}): Promise<JsonResponse> {
  const response = await request(`${running.baseUrl}${path}`, init);
  expectNoInternals(typeof response.body === 'string' ? response.body : JSON.stringify(response.body));
  return response;
}

const withKey = (apiKey = credential.apiKey): RequestInit => ({ headers: { 'x-api-key': apiKey } });

/** node:http, because fetch folds repeated headers into one before sending. */
async function rawGet(path: string, headers: http.OutgoingHttpHeaders): Promise<{ status: number; body: string }> {
  const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.get(`${running.baseUrl}${path}`, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
  expectNoInternals(response.body);
  return response;
}

describe('Client IDs that are not what they seem', () => {
  test.each([
    ['a lone percent sign', '%'],
    ['a percent sign with non-hex digits', '%G1'],
    ['a truncated escape', 'rs_0123456789abcdef%4'],
    ['bytes that are not UTF-8', '%FF%FE'],
    ['an overlong UTF-8 slash', '%C0%AF'],
    ['an encoded slash', 'rs_01234567%2F89abcdef'],
    ['an encoded slash in lowercase hex', 'rs_01234567%2f89abcdef'],
    ['a double-encoded slash', 'rs_01234567%252F89abcdef'],
    ['an encoded NUL byte', 'rs_0123456789abcdef%00'],
    ['an encoded newline', 'rs_0123456789abcdef%0A'],
    ['a Client ID with a trailing space', () => `${credential.clientId}%20`],
    ['a Client ID with a leading space', () => `%20${credential.clientId}`],
    ['a Client ID in upper case', () => credential.clientId.toUpperCase()],
    ['a Client ID with its prefix in upper case', () => `RS${credential.clientId.slice(2)}`],
    [
      'a Client ID with non-ASCII letters',
      'rs_%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9',
    ],
    ['a body too short', 'rs_0123456789abcde'],
    ['a body too long', `rs_${'a'.repeat(65)}`],
    ['a 10,000 character Client ID', `rs_${'a'.repeat(10_000)}`],
  ])('when the Client ID is %s, then 400 INVALID_CLIENT_ID', async (_name, id) => {
    const segment = typeof id === 'function' ? id() : id;

    const response = await call(`/v1/customers/${segment}/score`, withKey());

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_CLIENT_ID');
  });

  test('when a valid Client ID is percent-encoded, then it is decoded once and echoed as issued', async () => {
    const encoded = credential.clientId.replace('_', '%5F');

    const response = await call(`/v1/customers/${encoded}/score`, withKey());

    expect(response.status).toBe(200);
    expect(response.body.clientId).toBe(credential.clientId);
  });
});

describe('headers', () => {
  test('when x-api-key is sent twice, then the joined value does not verify: 401 INVALID_API_KEY', async () => {
    const response = await rawGet(`/v1/customers/${credential.clientId}/score`, { 'x-api-key': [credential.apiKey, credential.apiKey] });

    expect(response.status).toBe(401);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'INVALID_API_KEY' });
  });

  test('when x-api-key is only whitespace, then 401 MISSING_API_KEY', async () => {
    const response = await rawGet(`/v1/customers/${credential.clientId}/score`, { 'x-api-key': '   ' });

    expect(response.status).toBe(401);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'MISSING_API_KEY' });
  });

  test('when the key has surrounding text, then 401 INVALID_API_KEY', async () => {
    const response = await call(`/v1/customers/${credential.clientId}/score`, withKey(`Bearer ${credential.apiKey}`));

    expect(response.body.code).toBe('INVALID_API_KEY');
  });
});

describe('methods and paths', () => {
  test.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])(
    'when %s is sent to a customer resource, then 405 with Allow: GET, HEAD',
    async (method) => {
      const response = await call(`/v1/customers/${credential.clientId}/pillars`, { method, ...withKey() });

      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
      expect(response.body.code).toBe('METHOD_NOT_ALLOWED');
    },
  );

  test.each([
    '/',
    '/v1',
    '/v1/customers',
    '/v1/customers/',
    '/v1/customers/rs_0123456789abcdefABCDEF',
    '/v1/customers/rs_0123456789abcdefABCDEF/grades',
    '/v1/customers/rs_0123456789abcdefABCDEF/score/history/all',
    '/v2/customers/rs_0123456789abcdefABCDEF/score',
    '/v1/customers/rs_0123456789abcdefABCDEF/%25FF',
  ])('when %s is requested, then a JSON 404 ROUTE_NOT_FOUND', async (path) => {
    const response = await call(path, withKey());

    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body.code).toBe('ROUTE_NOT_FOUND');
  });

  test.each(['/v1/customers/rs_0123456789abcdefABCDEF/%FF', '/v1/%E0%A4%A', '/v1/portfolio/%zz'])(
    'when %s (not valid percent-encoding) is requested, then a JSON 400 VALIDATION_FAILED naming the path (decision 50)',
    async (path) => {
      const response = await call(path, withKey());

      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'path' }] });
    },
  );

  test('when a resource path ends in a slash, then it is served like the path without it', async () => {
    const response = await call(`/v1/customers/${credential.clientId}/score/`, withKey());

    expect(response.status).toBe(200);
  });

  test('when HEAD is sent, then the headers of the GET come back without a body', async () => {
    const head = await call(`/v1/customers/${credential.clientId}/pillars`, { method: 'HEAD', ...withKey() });
    const get = await call(`/v1/customers/${credential.clientId}/pillars`, withKey());

    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers.get('content-type')).toMatch(/^application\/json/);
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(head.headers.get('cache-control')).toBe('no-store');
    expect(head.headers.get('ratelimit-policy')).toMatch(/"credential"/);
  });

  test('when HEAD fails authentication, then the status comes back without a body', async () => {
    const response = await call(`/v1/customers/${credential.clientId}/score/history`, { method: 'HEAD' });

    expect(response.status).toBe(401);
    expect(response.body).toBe('');
  });

  test.each(['0', '367', '-1', '1.5', '+5', '05', 'ten', '', '1e2'])(
    'when the history limit is "%s", then 400 INVALID_PARAMETER',
    async (limit) => {
      const response = await call(`/v1/customers/${credential.clientId}/score/history?limit=${limit}`, withKey());

      expect(response.status).toBe(400);
      expect(response.body.code).toBe('INVALID_PARAMETER');
    },
  );

  test('when the history limit is given twice, then 400 INVALID_PARAMETER', async () => {
    const response = await call(`/v1/customers/${credential.clientId}/score/history?limit=1&limit=2`, withKey());

    expect(response.body.code).toBe('INVALID_PARAMETER');
  });
});
