import { z } from 'zod';
import { env } from '@rsd/platform';

export type RuntimeKind = 'embedded' | 'distributed';
/** A server a service needs on the distributed runtime. */
export type Need = 'kafka' | 'mongo' | 'redis';

const VARIABLE: Record<Need, 'KAFKA_BROKERS' | 'MONGO_URL' | 'REDIS_URL'> = {
  kafka: 'KAFKA_BROKERS',
  mongo: 'MONGO_URL',
  redis: 'REDIS_URL',
};

/**
 * Which adapters a process runs on. `embedded`: in-process, event log on disk under DATA_DIR.
 * `distributed`: Kafka, MongoDB and Redis, whichever of them this process needs.
 */
export function runtimeConfigSchema(options: { defaultRuntime: RuntimeKind; needs: readonly Need[] }) {
  return z
    .object({
      RUNTIME: z.enum(['embedded', 'distributed']).default(options.defaultRuntime),
      DATA_DIR: env.string('.data'),
      KAFKA_BROKERS: env.list(),
      KAFKA_TOPIC_PARTITIONS: env.positiveInt(6),
      KAFKA_REPLICATION_FACTOR: env.positiveInt(1),
      MONGO_URL: env.optionalString(),
      CREDENTIALS_DB: env.string('rsd_credentials'),
      READ_VIEWS_DB: env.string('rsd_read_views'),
      NOTIFIER_DB: env.string('rsd_notifier'),
      REDIS_URL: env.optionalString(),
      SHUTDOWN_DEADLINE_MS: env.positiveInt(10_000),
      // Unset: keep waiting for the dependencies; the orchestrator decides when a start took too long.
      START_DEADLINE_MS: z.preprocess((value) => (value === '' ? undefined : value), z.coerce.number().int().positive().optional()),
    })
    .superRefine((config, ctx) => {
      if (config.RUNTIME !== 'distributed') return;
      for (const need of options.needs) {
        const variable = VARIABLE[need];
        const value = config[variable];
        if (value === undefined || (Array.isArray(value) && value.length === 0)) {
          ctx.addIssue({ code: 'custom', path: [variable], message: `is required when RUNTIME=distributed` });
        }
      }
    });
}

export type RuntimeConfig = z.infer<ReturnType<typeof runtimeConfigSchema>>;
