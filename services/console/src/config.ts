import { z } from 'zod';
import { consoleSigningKeyOf, env } from '@rsd/platform';
import { consoleConfigSchema } from './console/console-config';
import { sessionKeyOf } from './console/console-sessions';

const httpUrl = env.optionalString().pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional());
const valid = (check: (value: string) => unknown) => (value: string | undefined) => {
  if (value === undefined) return true;
  try {
    check(value);
    return true;
  } catch {
    return false;
  }
};

/**
 * Decision 51: the console, a client of the credentials service's and the notifier's APIs. It holds
 * no store and no secret of another service: its own signing key (the APIs verify its tokens with the
 * public half, published at /.well-known/jwks.json) and its own key for the sessions it seals.
 */
const serviceConfigSchema = z.object({
  CONSOLE_PORT: env.port(8084),
  CONSOLE_HOST: env.string('0.0.0.0'),
  /** Where the console reaches the credentials service's API; unset: the one of the same process (the embedded runtime). */
  CREDENTIALS_URL: httpUrl,
  /** Where it reaches the notifier's, for the organization's alert webhooks; unset: the one of the same process, else none. */
  NOTIFIER_URL: httpUrl,
  /** The console as people reach it (`https://console.example.com`): forms from there are its own behind a proxy. */
  CONSOLE_PUBLIC_URL: httpUrl,
  /** Ed25519 private key, PKCS #8 DER in base64url (CONSOLE_SIGNING_KEY_FILE: a mounted file); the embedded runtime makes one. */
  CONSOLE_SIGNING_KEY: env.optionalString().refine(valid(consoleSigningKeyOf), 'must be an Ed25519 private key, PKCS #8 DER in base64url'),
  /** 32 bytes in base64url: seals the sessions; the same on every replica. */
  CONSOLE_SESSION_KEY: env.optionalString().refine(valid(sessionKeyOf), 'must be 32 bytes, base64url'),
  /** Proxy hops in front of the console whose X-Forwarded-For is trusted (an ingress: 1): the claim page's address. */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(32).default(0),
  LOG_LEVEL: env.logLevel(),
});

export const consoleServiceConfigSchema = serviceConfigSchema.and(consoleConfigSchema);
export type ConsoleServiceConfig = z.infer<typeof consoleServiceConfigSchema>;
