import { ConfigError } from '@rsd/platform';
import { dependencyOf } from './dependency-of';

export type Engine = 'kafka' | 'mongo' | 'redis';

/**
 * Node's codes for a server certificate that is not trusted: not signed by the authority the client
 * was given (or a public one), expired, or not naming the host dialled.
 */
const UNTRUSTED_CERTIFICATE = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

const AUTHORITY: Record<Engine, string> = { kafka: 'KAFKA_SSL_CA_FILE', mongo: 'MONGO_TLS_CA_FILE', redis: 'REDIS_TLS_CA_FILE' };
const SERVER: Record<Engine, string> = { kafka: 'a Kafka broker', mongo: 'the MongoDB server', redis: 'Redis' };
const CREDENTIALS: Record<Engine, { variable: string; names: string }> = {
  kafka: { variable: 'KAFKA_SASL_PASSWORD', names: 'KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD' },
  mongo: { variable: 'MONGO_URL', names: "MONGO_URL's user and password" },
  redis: { variable: 'REDIS_PASSWORD', names: 'REDIS_USERNAME and REDIS_PASSWORD' },
};

/**
 * An engine that refused this process for what it was configured with, as the one line an operator
 * reads: its certificate is not one the configured authority signed, or it refused the credentials.
 * No retry mends either, so the start ends there (a ConfigError) instead of waiting as it does for a
 * server that is not up yet. Undefined for any other error. The line names the variable to fix and
 * quotes the driver's reason, which holds no secret.
 */
export function engineRefusal(error: unknown, from: Engine | undefined = engineOf(error)): ConfigError | undefined {
  const found = refusalIn(error, from, 0);
  if (!found) return undefined;
  const { engine, kind, reason } = found;
  if (kind === 'certificate') {
    return new ConfigError([
      `${AUTHORITY[engine]}: ${SERVER[engine]} presented a certificate this process does not trust (${reason}): ` +
        `${AUTHORITY[engine]} must name the authority that signed it (unset: the system's authorities)`,
    ]);
  }
  const { variable, names } = CREDENTIALS[engine];
  return new ConfigError([`${variable}: ${SERVER[engine]} refused ${names} (${reason})`]);
}

interface Refusal {
  engine: Engine;
  kind: 'certificate' | 'credentials';
  reason: string;
}

function engineOf(error: unknown): Engine | undefined {
  const dependency = dependencyOf(error);
  return dependency === 'kafka' || dependency === 'mongo' || dependency === 'redis' ? dependency : undefined;
}

/** Depth-first through what the drivers wrap: `cause`, kafkajs's `originalError`, ioredis's `lastNodeError`, the MongoDB driver's server descriptions. */
function refusalIn(value: unknown, engine: Engine | undefined, depth: number): Refusal | undefined {
  if (typeof value !== 'object' || value === null || depth > 6) return undefined;
  const error = value as Record<string, unknown> & { name?: unknown; message?: unknown; code?: unknown };
  const name = typeof error.name === 'string' ? error.name : '';
  const message = typeof error.message === 'string' ? error.message : '';
  const here: Engine | undefined = name.startsWith('KafkaJS') ? 'kafka' : name.startsWith('Mongo') ? 'mongo' : engine;
  if (here && typeof error.code === 'string' && UNTRUSTED_CERTIFICATE.has(error.code)) {
    // Without Node's advice to use the system's authorities (`; if the root CA is installed locally, …`): the line says what to set.
    return { engine: here, kind: 'certificate', reason: message.replace(/^Connection error: /, '').split(';', 1)[0]! };
  }
  if (name === 'KafkaJSSASLAuthenticationError') return { engine: 'kafka', kind: 'credentials', reason: message };
  // MongoDB's AuthenticationFailed; FerretDB's PostgreSQL refusing the user and password it was handed.
  const refusedByPostgres = /password authentication failed for user "[^"]*"/.exec(message);
  if (here === 'mongo' && (error.code === 18 || refusedByPostgres)) {
    return { engine: 'mongo', kind: 'credentials', reason: refusedByPostgres?.[0] ?? message.split('\n', 1)[0]! };
  }
  if (/^(WRONGPASS|NOAUTH)\b/.test(message)) return { engine: 'redis', kind: 'credentials', reason: message };
  const servers = (error.reason as { servers?: unknown } | undefined)?.servers;
  const nested = [
    error.cause,
    error.originalError,
    error.lastNodeError,
    ...(Array.isArray(error.errors) ? (error.errors as unknown[]) : []),
    ...(servers instanceof Map ? [...servers.values()].map((server) => (server as { error?: unknown }).error) : []),
  ];
  for (const inner of nested) {
    const found = refusalIn(inner, here, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** `work`, its failure turned into the ConfigError of engineRefusal when an engine refused this process. */
export async function failingOnRefusal<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw engineRefusal(error) ?? error;
  }
}
