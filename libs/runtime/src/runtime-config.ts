import { z } from 'zod';
import {
  ConfigError,
  env,
  secretsFromFiles,
  SUBJECT_KEYS_MASTER_KEY,
  SUBJECT_KEYS_PREVIOUS_MASTER_KEY,
  subjectKeysMasterKey,
  subjectKeysPreviousMasterKey,
} from '@rsd/platform';
import { ENGINE_SECRETS, engineConnectionsOf, engineSettingsShape, PLAIN_CONNECTIONS } from './engine-settings';

export type RuntimeKind = 'embedded' | 'distributed';
/** A server a service needs on the distributed runtime. */
export type Need = 'kafka' | 'mongo' | 'redis';

const VARIABLE: Record<Need, 'KAFKA_BROKERS' | 'MONGO_URL' | 'REDIS_URL'> = {
  kafka: 'KAFKA_BROKERS',
  mongo: 'MONGO_URL',
  redis: 'REDIS_URL',
};

/** `host:port`, the host a name, an IPv4 address or a bracketed IPv6 address. */
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/**
 * REDIS_CLUSTER_NODES: `host:port,host:port,…`, some or all of a Redis Cluster's nodes (the client
 * learns the others from them). Empty: no cluster.
 */
const clusterNodes = () =>
  env.list().transform((nodes, ctx) =>
    nodes.flatMap((node) => {
      const match = HOST_PORT.exec(node);
      const port = Number(match?.[2]);
      if (!match?.[1] || port < 1 || port > 65535) {
        ctx.addIssue({ code: 'custom', message: `"${node}" is not a host:port` });
        return [];
      }
      return [{ host: match[1].replace(/^\[|\]$/g, ''), port }];
    }),
  );

/**
 * Which adapters a process runs on. `embedded`: in-process, event log on disk under DATA_DIR.
 * `distributed`: Kafka, MongoDB and Redis, whichever of them this process needs, reached as
 * `engines` says (TLS, credentials: decision 53), their secrets from the environment or from the
 * files `<VARIABLE>_FILE` names.
 */
export function runtimeConfigSchema(options: { defaultRuntime: RuntimeKind; needs: readonly Need[] }) {
  const distributed = (input: Record<string, unknown>) => (input.RUNTIME || options.defaultRuntime) === 'distributed';
  // A process of services that need no engine (the console) reads none of the engines' secrets or
  // certificates: a Deployment sharing the others' settings need not mount their files.
  const reachesNoEngine = options.needs.length === 0;
  const settings = z
    .object({
      RUNTIME: z.enum(['embedded', 'distributed']).default(options.defaultRuntime),
      DATA_DIR: env.string('.data'),
      KAFKA_BROKERS: env.list(),
      KAFKA_TOPIC_PARTITIONS: env.positiveInt(6),
      // Unset: 3 on a cluster of three brokers or more (with min.insync.replicas=2), else 1.
      KAFKA_REPLICATION_FACTOR: z.preprocess((value) => (value === '' ? undefined : value), z.coerce.number().int().positive().optional()),
      MONGO_URL: env.optionalString(),
      CREDENTIALS_DB: env.string('rsd_credentials'),
      READ_VIEWS_DB: env.string('rsd_read_views'),
      NOTIFIER_DB: env.string('rsd_notifier'),
      // Decision 56: the subjects' keys in a database of their own, so a dump of the others holds none.
      SUBJECT_KEYS_DB: env.string('rsd_subject_keys'),
      // Required on the distributed runtime; the embedded runtime makes it into DATA_DIR when unset.
      SUBJECT_KEYS_MASTER_KEY: env.optionalString(),
      // During a rotation of the master key only: unwraps the keys it wrapped until they are re-wrapped.
      SUBJECT_KEYS_PREVIOUS_MASTER_KEY: env.optionalString(),
      REDIS_URL: env.optionalString(),
      // Set, it selects a Redis Cluster for every use of Redis, and REDIS_URL is not used.
      REDIS_CLUSTER_NODES: clusterNodes(),
      SHUTDOWN_DEADLINE_MS: env.positiveInt(10_000),
      // Unset: keep waiting for the dependencies; the orchestrator decides when a start took too long.
      START_DEADLINE_MS: z.preprocess((value) => (value === '' ? undefined : value), z.coerce.number().int().positive().optional()),
      ...engineSettingsShape,
    })
    .superRefine((config, ctx) => {
      if (config.RUNTIME !== 'distributed') return;
      for (const need of options.needs) {
        const variable = VARIABLE[need];
        if (need === 'redis' && config.REDIS_CLUSTER_NODES.length > 0) continue;
        const value = config[variable];
        if (value === undefined || (Array.isArray(value) && value.length === 0)) {
          const message =
            need === 'redis' ? 'is required when RUNTIME=distributed (or REDIS_CLUSTER_NODES)' : 'is required when RUNTIME=distributed';
          ctx.addIssue({ code: 'custom', path: [variable], message });
        }
      }
    })
    .transform((config, ctx) => {
      const subjectKeys = masterKeyOf(config, ctx, !reachesNoEngine && config.RUNTIME === 'distributed');
      if (config.RUNTIME !== 'distributed' || reachesNoEngine) return { ...config, engines: PLAIN_CONNECTIONS, ...subjectKeys };
      const { connections, problems } = engineConnectionsOf({ ...config, clustered: config.REDIS_CLUSTER_NODES.length > 0 });
      for (const { variable, message } of problems) ctx.addIssue({ code: 'custom', path: [variable], message });
      return { ...config, engines: connections, ...subjectKeys };
    });
  // The secrets' files are read before anything else looks at the variables they set.
  return z.preprocess((input, ctx) => {
    if (typeof input !== 'object' || input === null || reachesNoEngine) return input;
    const secrets = distributed(input as Record<string, unknown>)
      ? [...ENGINE_SECRETS, SUBJECT_KEYS_MASTER_KEY, SUBJECT_KEYS_PREVIOUS_MASTER_KEY]
      : [SUBJECT_KEYS_MASTER_KEY, SUBJECT_KEYS_PREVIOUS_MASTER_KEY];
    const { env: resolved, problems } = secretsFromFiles(input as NodeJS.ProcessEnv, secrets);
    for (const { variable, message } of problems) ctx.addIssue({ code: 'custom', path: [variable], message });
    return resolved;
  }, settings);
}

export type RuntimeConfig = z.infer<ReturnType<typeof runtimeConfigSchema>>;

/**
 * Decision 56's master key, checked (32 bytes, base64), its value never echoed: required where
 * `required` (the distributed runtime: every replica opens what the others sealed, and none may seal
 * under a key of its own making), else undefined when unset (the embedded runtime makes its own).
 */
function masterKeyOf(
  config: { SUBJECT_KEYS_MASTER_KEY?: string | undefined; SUBJECT_KEYS_PREVIOUS_MASTER_KEY?: string | undefined },
  ctx: z.RefinementCtx,
  required: boolean,
): { subjectKeysMasterKey?: Buffer; subjectKeysPreviousMasterKey?: Buffer } {
  const previous = previousMasterKeyOf(config, ctx);
  if (!required && !config.SUBJECT_KEYS_MASTER_KEY) return previous;
  try {
    const current = subjectKeysMasterKey({ [SUBJECT_KEYS_MASTER_KEY]: config.SUBJECT_KEYS_MASTER_KEY });
    if (previous.subjectKeysPreviousMasterKey?.equals(current)) {
      ctx.addIssue({
        code: 'custom',
        path: [SUBJECT_KEYS_PREVIOUS_MASTER_KEY],
        message: `is ${SUBJECT_KEYS_MASTER_KEY} itself: give the key rotated away from`,
      });
    }
    return { subjectKeysMasterKey: current, ...previous };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const message =
      required && !config.SUBJECT_KEYS_MASTER_KEY
        ? `is required when RUNTIME=distributed (32 random bytes, base64: the same on every replica), or ${SUBJECT_KEYS_MASTER_KEY}_FILE`
        : 'must be 32 bytes, base64';
    ctx.addIssue({ code: 'custom', path: [SUBJECT_KEYS_MASTER_KEY], message });
    return {};
  }
}

/** The previous master key of a rotation under way, checked as the current one; none when unset. */
function previousMasterKeyOf(config: { SUBJECT_KEYS_PREVIOUS_MASTER_KEY?: string | undefined }, ctx: z.RefinementCtx) {
  try {
    const key = subjectKeysPreviousMasterKey({ [SUBJECT_KEYS_PREVIOUS_MASTER_KEY]: config.SUBJECT_KEYS_PREVIOUS_MASTER_KEY });
    return key ? { subjectKeysPreviousMasterKey: key } : {};
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    ctx.addIssue({ code: 'custom', path: [SUBJECT_KEYS_PREVIOUS_MASTER_KEY], message: 'must be 32 bytes, base64' });
    return {};
  }
}
