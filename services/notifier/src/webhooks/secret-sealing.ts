import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '@rsd/platform';

/** Seals the subscriptions' signing secrets for the store, and opens them to sign a delivery. */
export interface SecretSealer {
  seal(secret: string): string;
  open(sealed: string): string;
}

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const VERSION = 'v1';

/**
 * AES-256-GCM with a random 96-bit nonce per secret: `v1.<nonce>.<ciphertext>.<tag>` in base64url.
 * The notifier must sign with the secret, so a digest will not do; sealed, a copy of the store
 * (a backup, a dump) reveals no secret without the key, which lives apart from it.
 */
export function secretSealer(key: Buffer): SecretSealer {
  if (key.length !== KEY_BYTES) throw new ConfigError([`WEBHOOK_SECRET_KEY: must be ${KEY_BYTES} bytes, base64`]);
  return {
    seal(secret) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return [VERSION, nonce, sealed, cipher.getAuthTag()]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const [version, nonce, ciphertext, tag] = sealed.split('.');
      if (version !== VERSION || !nonce || !ciphertext || !tag) throw new Error('not a sealed webhook secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

export const WEBHOOK_KEY_FILE = 'webhook-secret-key';

/** A configuration error, which no retry mends: main checks it before anything starts. */
export function assertWebhookSecretKeyConfigured(configured: string | undefined, runtime: 'embedded' | 'distributed'): void {
  if (configured !== undefined) {
    secretSealer(Buffer.from(configured, 'base64'));
    return;
  }
  if (runtime === 'distributed') {
    throw new ConfigError(['WEBHOOK_SECRET_KEY: is required on the distributed runtime (32 random bytes, base64, from a secret)']);
  }
}

/** The key from the configuration, or on the embedded runtime only, generated once into its data directory (mode 0600). */
export async function webhookSecretKey(
  configured: string | undefined,
  dataDir: string | undefined,
): Promise<{ key: Buffer; created: boolean }> {
  if (configured) return { key: Buffer.from(configured, 'base64'), created: false };
  if (dataDir === undefined) {
    throw new ConfigError(['WEBHOOK_SECRET_KEY: is required on the distributed runtime (32 random bytes, base64, from a secret)']);
  }
  const file = join(dataDir, WEBHOOK_KEY_FILE);
  try {
    return { key: Buffer.from((await readFile(file, 'utf8')).trim(), 'base64'), created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(KEY_BYTES);
  await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return { key, created: true };
}
