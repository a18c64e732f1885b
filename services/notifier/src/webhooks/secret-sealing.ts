import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ConfigError } from '@rsd/platform';
import type { SecretSpec } from '@rsd/ports';

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

/**
 * The key that seals the subscriptions' secrets: WEBHOOK_SECRET_KEY, or on the embedded runtime
 * generated into the data directory once. Changing it makes every stored secret unreadable.
 */
export const WEBHOOK_KEY_SECRET: SecretSpec = {
  variable: 'WEBHOOK_SECRET_KEY',
  file: 'webhook-secret-key',
  generate: () => randomBytes(KEY_BYTES).toString('base64'),
  requiredBecause: `it seals the webhook secrets (${KEY_BYTES} random bytes, base64, from a secret)`,
};

/** WEBHOOK_SECRET_KEY's rule, for its configuration schema: a malformed key is a configuration error, found before anything connects. */
export const isWebhookSecretKey = (value: string): boolean => Buffer.from(value, 'base64').length === KEY_BYTES;
