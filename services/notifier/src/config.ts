import { z } from 'zod';
import { isWebhookSecretKey } from './webhooks/secret-sealing';
import { callerAuthConfigSchema, consoleVerificationConfigShape, env, leaseConfigShape } from '@rsd/platform';
import { recipientAccessConfigShape } from '@rsd/recipient-access';

const flag = (fallback: 'true' | 'false') =>
  z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .default(fallback)
    .transform((value) => value === 'true');

export const notifierConfigSchema = z.object({
  NOTIFIER_PORT: env.port(8083),
  NOTIFIER_HOST: env.string('0.0.0.0'),
  ...recipientAccessConfigShape,
  /** Decision 52: the leases on the queue's shards, where replicas share it. */
  ...leaseConfigShape,
  /**
   * Decision 50: an organization's alert-webhook management (every call under
   * /organizations/{organizationId}/webhooks, tests and redeliveries included), per minute and
   * organization, counted across replicas like a credential's: decision 8's 120 by default.
   */
  ORGANIZATION_RATE_LIMIT_PER_MINUTE: env.positiveInt(120),
  /**
   * Decision 28: `true` lets targets be `http` and resolve to loopback or private addresses, for
   * development and tests only. Cloud-metadata and reserved addresses stay refused even then.
   */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: flag('false'),
  /** Decision 27: an attempt that has not been answered by then counts as failed. */
  WEBHOOK_ATTEMPT_TIMEOUT_MS: env.positiveInt(10_000),
  /** What is read of a target's answer, at most; the rest is not read (the status is what counts). */
  WEBHOOK_RESPONSE_MAX_BYTES: env.positiveInt(64 * 1024),
  /** Attempts in flight at once, over every subscription. */
  WEBHOOK_CONCURRENCY: env.positiveInt(32),
  /** How often the queue is looked at when nothing new was queued. */
  WEBHOOK_POLL_INTERVAL_MS: env.positiveInt(500),
  /** Attempts kept per subscription for GET …/deliveries. */
  WEBHOOK_ATTEMPTS_KEPT: env.positiveInt(100),
  /**
   * The key that seals the subscriptions' signing secrets in the store: 32 bytes, base64. Required on
   * the distributed runtime (from a secret); the embedded runtime generates one into DATA_DIR
   * (WEBHOOK_KEY_SECRET).
   */
  WEBHOOK_SECRET_KEY: env.optionalString().refine((key) => key === undefined || isWebhookSecretKey(key), 'must be 32 bytes, base64'),
  LOG_LEVEL: env.logLevel(),
  /**
   * Decision 44: an organization's alert webhooks take the credentials service's bearer tokens, checked
   * with the same settings. Unlike there they are optional: without them every token is refused (401),
   * and the notifier says so when it starts.
   */
  ...callerAuthConfigSchema.shape,
  /**
   * And the console's, for the person signed in to it (decision 51): verified with the console's public
   * key (CONSOLE_JWKS_URL or CONSOLE_PUBLIC_KEY); unset, the console of the same process, if any.
   */
  ...consoleVerificationConfigShape,
});
export type NotifierConfig = z.infer<typeof notifierConfigSchema>;
