import { z } from 'zod';
import { MAX_ACCESS_RECORDS_PER_MESSAGE } from '@rsd/contracts';
import { accessLogRetentionDays, env, signingKeyList } from '@rsd/platform';
import { recipientAccessConfigShape } from '@rsd/recipient-access';

export const readApiConfigSchema = z.object({
  READ_API_PORT: env.port(8080),
  READ_API_HOST: env.string('0.0.0.0'),
  ...recipientAccessConfigShape,
  VIEW_CACHE_TTL_MS: env.positiveInt(30_000),
  /**
   * Decision 29: once this replica's change feed has been out of touch with the event log for longer,
   * customer resources answer 503 and /readyz fails until the feed has caught up again.
   */
  FEED_STALENESS_BOUND_MS: env.positiveInt(30_000),
  /**
   * Back in touch after that, the replica keeps refusing until its feed is fresh as of this long
   * after: time for the credentials service's outbox relay (OUTBOX_RELAY_INTERVAL_MS, 1 s) to publish
   * what it recorded during the outage. Keep it above that interval plus a publish.
   */
  FEED_RECOVERY_GRACE_MS: env.positiveInt(5_000),
  /**
   * A replica that reaches the event log but lags behind what it read there for longer refuses too
   * (503) until it has caught up: a revocation answered 200 is then enforced within about a second
   * even right after an outage. The feed reads the log's ends every 250 ms and normally reaches them
   * within a few milliseconds.
   */
  FEED_LAG_BOUND_MS: env.positiveInt(750),
  /**
   * Names this replica's change-feed consumer group (removed at shutdown). Unset: `<hostname>-<port>`,
   * which is stable across restarts and distinct for replicas that share a host.
   */
  REPLICA_ID: env.optionalString(),
  /**
   * Decision 24: the keys that sign customer resources, as a JSON array of Ed25519 JWKs. The first
   * signs; all are published at /.well-known/jwks.json (a key without `d` is published only).
   * Required on the distributed runtime (from a secret); the embedded runtime generates one into
   * DATA_DIR on first start when it is unset.
   */
  RESPONSE_SIGNING_KEYS: signingKeyList(),
  /** How long an unchanged response's signature is reused (its `created` says when it was made); 0 signs every response. */
  RESPONSE_SIGNATURE_REUSE_S: z.coerce.number().int().min(0).max(3600).default(60),
  /**
   * Decision 21: record every request whose credential was found in the access log. `false` turns the
   * recording off (the credentials service then lists nothing new and usage stops growing): for
   * measuring its cost, or an emergency, never as a way to run.
   */
  ACCESS_LOG_ENABLED: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .default('true')
    .transform((value) => value === 'true'),
  /** How long the stream keeps records (the Kafka topic's retention.ms); the credentials service reads the same variable. */
  ACCESS_LOG_RETENTION_DAYS: accessLogRetentionDays(),
  /** Records held while the stream is slow or away; beyond this they are dropped and counted (access_log_dropped_total). */
  ACCESS_LOG_BUFFER_MAX: env.positiveInt(10_000),
  /** A batch is published once this many records wait, and never larger. */
  ACCESS_LOG_BATCH_SIZE: z.coerce.number().int().min(1).max(MAX_ACCESS_RECORDS_PER_MESSAGE).default(500),
  /** Whatever waits is published at least this often. */
  ACCESS_LOG_FLUSH_INTERVAL_MS: env.positiveInt(1_000),
  LOG_LEVEL: env.logLevel(),
});
export type ReadApiConfig = z.infer<typeof readApiConfigSchema>;
