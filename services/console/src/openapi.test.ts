import { request } from '@rsd/testkit';
import { startConsole, type ConsoleHarness } from './testing/console-harness';

let h: ConsoleHarness;
beforeAll(async () => {
  h = await startConsole();
});
afterAll(() => h.close());

describe('the console service: its documentation, health and keys (decision 51)', () => {
  test('when /v1/openapi.json is read, then it documents the keys the APIs verify its tokens with', async () => {
    const document = await request(`${h.app.baseUrl}/v1/openapi.json`);

    expect(document.status).toBe(200);
    expect(Object.keys(document.body.paths)).toEqual(['/.well-known/jwks.json']);
    expect(document.body.paths['/.well-known/jwks.json'].get.security).toEqual([]);
  });

  test('when /healthz and /readyz are asked, then the console, which needs no engine, is up and ready', async () => {
    expect((await request(`${h.app.baseUrl}/healthz`)).status).toBe(200);
    expect((await request(`${h.app.baseUrl}/readyz`)).status).toBe(200);
  });

  test('when its keys are read, then they are the Ed25519 public key its tokens name, and no private part', async () => {
    const keys = await request(`${h.app.baseUrl}/.well-known/jwks.json`);

    expect(keys.status).toBe(200);
    expect(keys.headers.get('cache-control')).toBe('public, max-age=300');
    expect(keys.body).toEqual(await h.signer.jwks());
    expect(keys.body.keys).toEqual([expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' })]);
    expect(keys.body.keys[0]).not.toHaveProperty('d');
  });
});
