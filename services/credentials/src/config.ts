import { z } from 'zod';
import { CLIENT_ID_PREFIX_PATTERN } from '@rsd/contracts';
import {
  accessLogRetentionDays,
  callerAuthConfigSchema,
  consoleDelegationConfigShape,
  env,
  leaseConfigShape,
  refuseSharedConsoleSecret,
} from '@rsd/platform';
import { consoleConfigSchema } from './console/console-config';

const prefix = (fallback: string) =>
  env.string(fallback).pipe(z.string().regex(CLIENT_ID_PREFIX_PATTERN, 'must be 1-16 lowercase letters or digits, starting with a letter'));

const serviceConfigSchema = z
  .object({
    CREDENTIALS_PORT: env.port(8081),
    CREDENTIALS_HOST: env.string('0.0.0.0'),
    CLIENT_ID_PREFIX: prefix('rs'),
    API_KEY_PREFIX: prefix('rsk'),
    EXPIRY_CHECK_INTERVAL_MS: env.positiveInt(1000),
    OUTBOX_RELAY_INTERVAL_MS: env.positiveInt(1000),
    /**
     * Decision 52, where replicas share the store: how often the relay's leader looks for what the
     * others wrote. A write on another replica waits for it, so this bounds what that adds to a write.
     */
    OUTBOX_LEADER_INTERVAL_MS: env.positiveInt(100),
    /** Decision 52: the lease the relay and the expiry check run under. */
    ...leaseConfigShape,
    /** How long a create or revoke waits for the event log before answering (a revoke then says 202, enforcement pending). */
    EVENT_LOG_PUBLISH_DEADLINE_MS: env.positiveInt(5000),
    /** Decision 21: access-log entries older than this are pruned (a TTL index on MongoDB); set the same value on the read API. */
    ACCESS_LOG_RETENTION_DAYS: accessLogRetentionDays(),
    /** Decision 38: failed claim-link attempts (unknown, used, expired) per client address per minute; the read API's failed-authentication budget, shared. */
    FAILED_AUTH_LIMIT_PER_MINUTE: env.positiveInt(120),
    /** Decision 38: where claim links point (the credentials service's public origin); unset: the origin the create request reached. */
    CLAIM_LINK_BASE_URL: env.optionalString().pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional()),
    /** Decision 43: where GitHub's secret-scanning public keys are listed (`{ public_keys: [{ key_identifier, key, is_current }] }`). */
    SECRET_SCANNING_KEYS_URL: env
      .string('https://api.github.com/meta/public_keys/secret_scanning')
      .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })),
    LOG_LEVEL: env.logLevel(),
    /**
     * Where the console reaches the notifier to manage the organization's alert webhooks (with
     * CONSOLE_NOTIFIER_SECRET). Unset: the notifier of the same process, if one runs there (the
     * embedded runtime); else the console does not manage them.
     */
    NOTIFIER_URL: env.optionalString().pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional()),
    ...consoleDelegationConfigShape,
  })
  .superRefine((value, ctx) => {
    // A key must never be mistaken for a Client ID, in logs or in a pasted header.
    if (value.CLIENT_ID_PREFIX === value.API_KEY_PREFIX) {
      ctx.addIssue({ code: 'custom', path: ['API_KEY_PREFIX'], message: 'must differ from CLIENT_ID_PREFIX' });
    }
  });

/** Intersection, not extension: both halves are checked, so every bad variable is reported at once. */
export const credentialsConfigSchema = serviceConfigSchema
  .and(callerAuthConfigSchema)
  .and(consoleConfigSchema)
  .superRefine(refuseSharedConsoleSecret);
export type CredentialsConfig = z.infer<typeof credentialsConfigSchema>;
