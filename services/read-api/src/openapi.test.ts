import { request, type RunningApp } from '@rsd/testkit';
import { startReadApi } from './testing/read-api-harness';

let running: RunningApp;

interface DocumentedOperation {
  parameters: { name: string }[];
  responses: Record<string, { headers?: Record<string, { required?: boolean }>; content?: unknown }>;
}

beforeAll(async () => {
  running = await startReadApi();
});

afterAll(async () => {
  await running.close();
});

describe('API documentation', () => {
  test('when /v1/openapi.json is read, then it is OpenAPI 3.1 with the customer paths and their schemas', async () => {
    const response = await request(`${running.baseUrl}/v1/openapi.json`);

    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    expect(Object.keys(response.body.paths)).toEqual([
      '/customers/{clientId}/score',
      '/customers/{clientId}/pillars',
      '/customers/{clientId}/score/history',
      '/customers/{clientId}/certificate',
      '/portfolio',
      '/portfolio/customers',
      '/portfolio/scores',
      '/portfolio/pillars',
      '/portfolio/certificates',
      '/.well-known/jwks.json',
    ]);
    expect(Object.keys(response.body.components.schemas)).toEqual(
      expect.arrayContaining(['Score', 'PillarBreakdown', 'PillarScores', 'ScoreHistory', 'Error', 'Grade']),
    );
    const score = response.body.paths['/customers/{clientId}/score'].get;
    expect(score.security).toEqual([{ apiKey: [] }]);
    expect(score.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Score' });
    expect(score.responses['429'].headers).toHaveProperty('Retry-After');
    expect(score.parameters[0].schema.pattern).toBe('^rs_[A-Za-z0-9]{16,64}$');
    expect(response.body.components.schemas.PillarBreakdown.properties).not.toHaveProperty('score');
  });

  test("when the customer resources are documented, then so is every answer a client can get: 304, 405, 503 and the HTTP server's own", async () => {
    const response = await request<{ paths: Record<string, { get: DocumentedOperation }> }>(`${running.baseUrl}/v1/openapi.json`);

    for (const path of ['/customers/{clientId}/score', '/customers/{clientId}/pillars', '/customers/{clientId}/score/history']) {
      const operation = response.body.paths[path]!.get;
      expect([path, Object.keys(operation.responses)]).toEqual([
        path,
        ['200', '304', '400', '401', '403', '404', '405', '408', '429', '431', '503'],
      ]);
      expect(operation.responses['304']).not.toHaveProperty('content');
      expect(operation.responses['503']?.headers?.['Retry-After']?.required).toBe(true);
      expect(operation.responses['200']?.headers).toEqual(
        expect.objectContaining({ ETag: expect.anything(), Signature: expect.anything(), 'Content-Digest': expect.anything() }),
      );
      expect(operation.parameters.map((parameter) => parameter.name)).toContain('If-None-Match');
    }
    const history = response.body.paths['/customers/{clientId}/score/history']!.get;
    expect(history.parameters.map((parameter) => parameter.name)).toEqual(['clientId', 'from', 'to', 'limit', 'cursor', 'If-None-Match']);
  });

  test('when the signing keys path is called with another method than GET or HEAD, then 405 names the allowed ones', async () => {
    const response = await request(`${running.baseUrl}/.well-known/jwks.json`, { method: 'DELETE' });

    expect([response.status, response.headers.get('allow'), response.body.code]).toEqual([405, 'GET, HEAD', 'METHOD_NOT_ALLOWED']);
  });

  test('when /docs is read, then the page loads only local assets', async () => {
    const response = await request(`${running.baseUrl}/docs`);

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.body).toContain('/docs/swagger-ui-bundle.js');
    expect(response.body).not.toMatch(/https?:\/\//);
    const bundle = await fetch(`${running.baseUrl}/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    await bundle.arrayBuffer();
  });

  test('when /healthz is read, then it answers ok', async () => {
    const response = await request(`${running.baseUrl}/healthz`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });
});
