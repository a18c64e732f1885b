import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@rsd/platform';
import { readApiConfigSchema } from '../config';
import { loadOrCreateSecretFile } from '@rsd/runtime';
import { signingKeyListSchema, signingKeysFrom, SIGNING_KEYS_SECRET } from '@rsd/platform';

const aJwk = () => {
  const { x, d } = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  return { kty: 'OKP' as const, crv: 'Ed25519' as const, x: x!, d: d! };
};

describe('response signing keys (decision 24)', () => {
  test('when keys are configured, then the first signs, all are published, and a missing kid is the RFC 7638 thumbprint', async () => {
    const active = aJwk();
    const retiring = { ...aJwk(), d: undefined, kid: 'rsd-2026-05' };

    const keys = await signingKeysFrom(
      loadConfig(readApiConfigSchema, { RESPONSE_SIGNING_KEYS: JSON.stringify([active, retiring]) }).RESPONSE_SIGNING_KEYS!,
    );

    expect(keys.published.map((key) => key.kid)).toEqual([expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), 'rsd-2026-05']);
    expect(keys.active.kid).toBe(keys.published[0]!.kid);
    expect(JSON.stringify(keys.published)).not.toContain(active.d);
  });

  test.each([
    ['not JSON', '{', 'must be a JSON array of Ed25519 JWKs'],
    ['an empty list', '[]', 'the list'],
    ['a first key without its private part', JSON.stringify([{ ...aJwk(), d: undefined }]), 'the first key signs'],
    ['another curve', JSON.stringify([{ ...aJwk(), crv: 'X25519' }]), '0.crv'],
  ])('when RESPONSE_SIGNING_KEYS is %s, then the start stops naming the variable, never echoing the value', (_case, value, message) => {
    let thrown: unknown;
    try {
      loadConfig(readApiConfigSchema, { RESPONSE_SIGNING_KEYS: value });
    } catch (error) {
      thrown = error;
    }

    expect(String(thrown)).toContain('RESPONSE_SIGNING_KEYS');
    expect(String(thrown)).toContain(message);
    const d = /"d":"([^"]+)"/.exec(value)?.[1];
    if (d) expect(String(thrown)).not.toContain(d);
  });

  test("when the first key's private part belongs to another public key, then it is refused", async () => {
    await expect(signingKeysFrom([{ ...aJwk(), x: aJwk().x }])).rejects.toThrow('does not match');
  });

  test('when the embedded runtime starts for the first time, then it writes a key file readable by its owner only, and reuses it afterwards', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'signing-keys-'));
    try {
      const first = await loadOrCreateSecretFile(dir, SIGNING_KEYS_SECRET);
      const again = await loadOrCreateSecretFile(dir, SIGNING_KEYS_SECRET);

      expect(first.created).toBe(true);
      expect(again).toEqual({ value: first.value, created: false });
      expect((await stat(join(dir, SIGNING_KEYS_SECRET.file))).mode & 0o777).toBe(0o600);
      expect(await readFile(join(dir, SIGNING_KEYS_SECRET.file), 'utf8')).toBe(`${first.value}\n`);
      // The same JWK list RESPONSE_SIGNING_KEYS takes, and one that signs.
      await expect(signingKeysFrom(signingKeyListSchema.parse(JSON.parse(first.value)))).resolves.toBeDefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
