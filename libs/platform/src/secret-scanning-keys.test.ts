import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { closeServer, createLogger, portOf, UnavailableError } from '@rsd/platform';
import { signReport, type SigningKey } from '@rsd/testkit';
import { secretScanningKeys } from './secret-scanning-keys';

/** A key list the test changes at will: what it serves, and whether it answers at all. */
let listed: { key_identifier: string; key: string; is_current: boolean }[] = [];
let answering = true;
let fetches = 0;
let server: Server;
let url: string;
let now = new Date('2026-11-27T10:00:00.000Z');
const clock = { now: () => now };
const log = createLogger('credentials', 'silent');

function aKey(identifier: string, curve = 'prime256v1'): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: curve });
  return { identifier, privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}
const list = (...keys: SigningKey[]) => {
  listed = keys.map((key) => ({ key_identifier: key.identifier, key: key.publicPem, is_current: true }));
};

beforeEach(async () => {
  fetches = 0;
  answering = true;
  now = new Date('2026-11-27T10:00:00.000Z');
  server = createServer((_req, res) => {
    fetches += 1;
    if (!answering) res.writeHead(502).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ public_keys: listed }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${portOf(server)}/keys`;
});
afterEach(() => closeServer(server));

const body = Buffer.from('[{"token":"rsk_x","type":"t"}]');

/**
 * The signed sample request of GitHub's partner-program documentation ("Implement signature verification"):
 * a signature made by GitHub's own signer, not by this code base, and the public key GitHub lists for it.
 */
const GITHUB_SAMPLE = {
  identifier: 'bcb53661c06b4728e59d897fb6165d5c9cda0fd9cdf9d09ead458168deb7518c',
  key: [
    '-----BEGIN PUBLIC KEY-----',
    'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYAGMWO8XgCamYKMJS6jc/qgvSlAd',
    'AjPuDPRcXU22YxgBrz+zoN19MzuRyW87qEt9/AmtoNP5GrobzUvQSyJFVw==',
    '-----END PUBLIC KEY-----',
    '',
  ].join('\n'),
  payload: '[{"source":"commit","token":"some_token","type":"some_type","url":"https://example.com/base-repo-url/"}]',
  signature: 'MEQCIQDaMKqrGnE27S0kgMrEK0eYBmyG0LeZismAEz/BgZyt7AIfXt9fErtRS4XaeSt/AO1RtBY66YcAdjxji410VQV4xg==',
};

describe('the secret-scanning keys', () => {
  test("when GitHub's documented sample request is checked against GitHub's listed key, then it verifies, and not once a byte of it changes", async () => {
    listed = [{ key_identifier: GITHUB_SAMPLE.identifier, key: GITHUB_SAMPLE.key, is_current: true }];
    const keys = secretScanningKeys({ url, clock, log });

    expect(await keys.verify(GITHUB_SAMPLE.identifier, Buffer.from(GITHUB_SAMPLE.payload), GITHUB_SAMPLE.signature)).toBe('valid');
    expect(
      await keys.verify(GITHUB_SAMPLE.identifier, Buffer.from(GITHUB_SAMPLE.payload.replace('commit', 'Commit')), GITHUB_SAMPLE.signature),
    ).toBe('invalid');
  });

  test('when a report is signed by a listed P-256 key, then it verifies, and another body or key does not', async () => {
    const key = aKey('k1');
    list(key);
    const keys = secretScanningKeys({ url, clock, log });

    expect(await keys.verify('k1', body, signReport(body.toString(), key))).toBe('valid');
    expect(await keys.verify('k1', Buffer.from(`${body.toString()} `), signReport(body.toString(), key))).toBe('invalid');
    expect(await keys.verify('k1', body, signReport(body.toString(), aKey('k1')))).toBe('invalid');
    expect(await keys.verify('k1', body, '')).toBe('invalid');
    expect(fetches).toBe(1);
  });

  test('when the list holds a key on another curve, then it is not taken', async () => {
    const other = aKey('p384', 'secp384r1');
    list(other);
    const keys = secretScanningKeys({ url, clock, log });

    expect(await keys.verify('p384', body, signReport(body.toString(), other))).toBe('unknown-key');
  });

  test('when the list is an hour old, then it is fetched again: a withdrawn key is no longer trusted', async () => {
    const key = aKey('k1');
    list(key);
    const keys = secretScanningKeys({ url, clock, log });
    expect(await keys.verify('k1', body, signReport(body.toString(), key))).toBe('valid');

    list(aKey('k2'));
    now = new Date(now.getTime() + 3_600_000);

    expect(await keys.verify('k1', body, signReport(body.toString(), key))).toBe('unknown-key');
    expect(fetches).toBe(2);
  });

  test('when the list is old but cannot be fetched again, then the cached keys keep working', async () => {
    const key = aKey('k1');
    list(key);
    const keys = secretScanningKeys({ url, clock, log });
    expect(await keys.verify('k1', body, signReport(body.toString(), key))).toBe('valid');

    answering = false;
    now = new Date(now.getTime() + 3_600_000);

    expect(await keys.verify('k1', body, signReport(body.toString(), key))).toBe('valid');
  });

  test('when the list cannot be fetched and the identifier is not cached, then it is an outage, asked again at most once a minute', async () => {
    answering = false;
    const keys = secretScanningKeys({ url, clock, log });

    await expect(keys.verify('k1', body, 'c2ln')).rejects.toBeInstanceOf(UnavailableError);
    await expect(keys.verify('k1', body, 'c2ln')).rejects.toBeInstanceOf(UnavailableError);
    expect(fetches).toBe(1);

    answering = true;
    const key = aKey('k1');
    list(key);
    now = new Date(now.getTime() + 60_000);
    expect(await keys.verify('k1', body, signReport(body.toString(), key))).toBe('valid');
    expect(fetches).toBe(2);
  });

  test('when many reports with unknown identifiers arrive at once, then the list is fetched once', async () => {
    list(aKey('k1'));
    const keys = secretScanningKeys({ url, clock, log });

    const checks = await Promise.all(Array.from({ length: 20 }, (_, n) => keys.verify(`unknown-${n}`, body, 'c2ln')));

    expect(new Set(checks)).toEqual(new Set(['unknown-key']));
    expect(fetches).toBe(1);
  });
});
