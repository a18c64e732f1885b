import { z } from 'zod';
import { CLIENT_ID_PREFIX_PATTERN } from '@rsd/contracts';
import { MIN_ALERT_ADDRESS_RETENTION_DAYS } from '@rsd/domain';
import {
  accessLogRetentionDays,
  callerAuthConfigSchema,
  consoleVerificationConfigShape,
  env,
  leaseConfigShape,
  signingKeyList,
} from '@rsd/platform';

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
    /** Decision 56: audit-trail entries older than this are pruned from the audit view (the event log keeps its events). */
    AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(400),
    /**
     * Decision 56: the addresses a grant keeps for its alerts (those it was read from, and each alert's)
     * older than this are erased. At least decision 44's 30 days, within which an address seen again is not new.
     */
    ALERT_ADDRESS_RETENTION_DAYS: z.coerce.number().int().min(MIN_ALERT_ADDRESS_RETENTION_DAYS).max(3650).default(90),
    /** Decision 38: failed claim-link attempts (unknown, used, expired) per client address per minute; the read API's failed-authentication budget, shared. */
    FAILED_AUTH_LIMIT_PER_MINUTE: env.positiveInt(120),
    /** Decision 38: where claim links point (the console's public origin, whose page claims the key); unset: CONSOLE_PUBLIC_URL, else the origin the create request reached. */
    CLAIM_LINK_BASE_URL: env.optionalHttpUrl(),
    /** Decision 43: where GitHub's secret-scanning public keys are listed (`{ public_keys: [{ key_identifier, key, is_current }] }`). */
    SECRET_SCANNING_KEYS_URL: env.httpUrl('https://api.github.com/meta/public_keys/secret_scanning'),
    LOG_LEVEL: env.logLevel(),
    /**
     * Decision 51: the console as people reach it (`https://console.example.com`). The console's pages and
     * claim pages printed before it had its own service answer a redirect there. Unset: the console of the
     * same process (the embedded runtime), else those paths are not found.
     */
    CONSOLE_PUBLIC_URL: env.optionalHttpUrl(),
    /**
     * Decision 54: access reviews' reports are signed with the read API's response-signing keys (decision 24),
     * as certificates are: the same JSON list of Ed25519 JWKs, the same secret on every runtime.
     */
    RESPONSE_SIGNING_KEYS: signingKeyList(),
    /** Decision 54: how often open access reviews are looked at (their due-soon alert, then their due time). */
    ACCESS_REVIEW_CHECK_INTERVAL_MS: env.positiveInt(5000),
    /** The console's public keys (CONSOLE_JWKS_URL or CONSOLE_PUBLIC_KEY): its tokens act for the person signed in to it. */
    ...consoleVerificationConfigShape,
  })
  .superRefine((value, ctx) => {
    // A key must never be mistaken for a Client ID, in logs or in a pasted header.
    if (value.CLIENT_ID_PREFIX === value.API_KEY_PREFIX) {
      ctx.addIssue({ code: 'custom', path: ['API_KEY_PREFIX'], message: 'must differ from CLIENT_ID_PREFIX' });
    }
  });

/** Intersection, not extension: both halves are checked, so every bad variable is reported at once. */
export const credentialsConfigSchema = serviceConfigSchema.and(callerAuthConfigSchema);
export type CredentialsConfig = z.infer<typeof credentialsConfigSchema>;
