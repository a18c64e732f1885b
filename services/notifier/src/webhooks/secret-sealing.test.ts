import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, createLogger, loadConfig } from '@rsd/platform';
import { resolveSecrets } from '@rsd/runtime';
import { notifierConfigSchema } from '../config';
import { secretSealer, WEBHOOK_KEY_SECRET } from './secret-sealing';

const silent = createLogger('test', 'silent');

describe('sealing the webhook secrets', () => {
  const key = randomBytes(32);
  const secret = `whsec_${randomBytes(32).toString('base64')}`;

  it('when a secret is sealed, then it opens to itself, and the sealed text holds nothing of it', () => {
    const sealer = secretSealer(key);

    const sealed = sealer.seal(secret);

    expect(sealer.open(sealed)).toBe(secret);
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain(secret.slice('whsec_'.length, 20));
    expect(sealer.seal(secret)).not.toBe(sealed);
  });

  it('when the sealed text was changed or another key opens it, then opening fails', () => {
    const sealed = secretSealer(key).seal(secret);
    const parts = sealed.split('.');
    // A different first character, whatever the sealed text began with (an 'A' would change nothing).
    const first = parts[2]!.startsWith('A') ? 'B' : 'A';
    const tampered = [parts[0], parts[1], `${first}${parts[2]!.slice(1)}`, parts[3]].join('.');

    expect(() => secretSealer(key).open(tampered)).toThrow();
    expect(() => secretSealer(randomBytes(32)).open(sealed)).toThrow();
    expect(() => secretSealer(key).open('not sealed')).toThrow('not a sealed webhook secret');
  });

  it('when the key is missing on the distributed runtime or is not 32 bytes, then it is a configuration error before anything starts', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'webhook-key-'));
    try {
      // Distributed: no data directory to make one in.
      await expect(resolveSecrets([WEBHOOK_KEY_SECRET], {}, undefined, silent)).rejects.toThrow(ConfigError);
      expect(() => loadConfig(notifierConfigSchema, { WEBHOOK_SECRET_KEY: randomBytes(16).toString('base64') })).toThrow(ConfigError);
      // Embedded: made once into the data directory, 32 bytes.
      const { env } = await resolveSecrets([WEBHOOK_KEY_SECRET], {}, dataDir, silent);
      expect(Buffer.from(env.WEBHOOK_SECRET_KEY ?? '', 'base64')).toHaveLength(32);
      expect(loadConfig(notifierConfigSchema, { WEBHOOK_SECRET_KEY: key.toString('base64') }).WEBHOOK_SECRET_KEY).toBe(
        key.toString('base64'),
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
