import { createMemoryViewStore, memoryRateLimitStores } from '@rsd/embedded';
import { createLogger, loadConfig } from '@rsd/platform';
import { request, startApp, type RunningApp } from '@rsd/testkit';
import { buildApp } from './app';
import { readApiConfigSchema } from './config';
import { testClock, testSigningKeys } from './testing/read-api-fixtures';

let running: RunningApp;

beforeAll(async () => {
  const config = loadConfig(readApiConfigSchema, {});
  running = await startApp(
    buildApp({
      signingKeys: testSigningKeys(),
      config,
      views: createMemoryViewStore(),
      rateLimitStores: memoryRateLimitStores,
      clock: testClock(),
      log: createLogger('read-api', 'silent'),
    }),
  );
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
