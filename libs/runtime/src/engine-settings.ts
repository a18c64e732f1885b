import { z } from 'zod';
import { env, tlsFromFiles, type TlsOptions, type VariableProblem } from '@rsd/platform';

export type KafkaSaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';
/** kafkajs's `sasl`, one shape per mechanism. */
export type KafkaSasl = { [M in KafkaSaslMechanism]: { mechanism: M; username: string; password: string } }[KafkaSaslMechanism];

/** How the runtime reaches Kafka, MongoDB and Redis beyond their addresses: TLS and credentials. */
export interface EngineConnections {
  /** kafkajs's `ssl` and `sasl`. */
  kafka: { ssl?: TlsOptions; sasl?: KafkaSasl };
  /** The MongoDB driver's options beside MONGO_URL (which carries the credentials): TLS verified, with MONGO_TLS_CA_FILE's authority. */
  mongo: { tls?: true } & Partial<TlsOptions>;
  /** ioredis's `tls`, `username` and `password` for the server or every node of the cluster. */
  redis: { tls?: TlsOptions; username?: string; password?: string };
}

/** Nothing beyond the addresses: the embedded runtime, or engines reached in plaintext without credentials. */
export const PLAIN_CONNECTIONS: EngineConnections = { kafka: {}, mongo: {}, redis: {} };

/** The engines' secrets: each may also come from the file `<VARIABLE>_FILE` names (a mounted Secret). */
export const ENGINE_SECRETS = [
  'KAFKA_SASL_USERNAME',
  'KAFKA_SASL_PASSWORD',
  'MONGO_URL',
  'REDIS_URL',
  'REDIS_USERNAME',
  'REDIS_PASSWORD',
] as const;

const blankAsUnset = (value: unknown) => (value === '' ? undefined : value);
const optionalFlag = () => z.preprocess(blankAsUnset, z.enum(['true', 'false'], { message: 'must be true or false' }).optional());

/** The variables of decision 53, beside KAFKA_BROKERS, MONGO_URL and REDIS_URL / REDIS_CLUSTER_NODES. */
export const engineSettingsShape = {
  KAFKA_SSL: optionalFlag(),
  KAFKA_SSL_CA_FILE: env.optionalString(),
  KAFKA_SSL_CERT_FILE: env.optionalString(),
  KAFKA_SSL_KEY_FILE: env.optionalString(),
  KAFKA_SASL_MECHANISM: z.preprocess(
    blankAsUnset,
    z.enum(['plain', 'scram-sha-256', 'scram-sha-512'], { message: 'must be plain, scram-sha-256 or scram-sha-512' }).optional(),
  ),
  KAFKA_SASL_USERNAME: env.optionalString(),
  KAFKA_SASL_PASSWORD: env.optionalString(),
  MONGO_TLS_CA_FILE: env.optionalString(),
  REDIS_TLS: optionalFlag(),
  REDIS_TLS_CA_FILE: env.optionalString(),
  REDIS_USERNAME: env.optionalString(),
  REDIS_PASSWORD: env.optionalString(),
};

type EngineSettings = z.infer<z.ZodObject<typeof engineSettingsShape>> & {
  MONGO_URL?: string | undefined;
  REDIS_URL?: string | undefined;
  clustered: boolean;
};

const file = (variable: string, path: string | undefined) => (path ? { variable, path } : undefined);

/**
 * The connections the settings describe, and what is wrong with them. Fails closed: a CA or client
 * certificate given for a connection that is not TLS is refused rather than ignored (the operator
 * meant TLS), and a MONGO_URL option that turns the certificate check off is refused: there is no
 * way to connect to a server whose certificate the configured authority did not sign.
 */
export function engineConnectionsOf(settings: EngineSettings): { connections: EngineConnections; problems: VariableProblem[] } {
  const problems: VariableProblem[] = [];
  const check: Check = {
    problem: (variable, message) => problems.push({ variable, message }),
    tls: (files) => {
      const read = tlsFromFiles(files);
      problems.push(...read.problems);
      return read.tls;
    },
    notTls: (variable, path, how) => {
      if (path) problems.push({ variable, message: `is set but the connection is not TLS: ${how}` });
    },
  };
  const connections = { kafka: kafkaOf(settings, check), mongo: mongoOf(settings, check), redis: redisOf(settings, check) };
  return { connections, problems };
}

interface Check {
  problem(variable: string, message: string): void;
  tls(files: Parameters<typeof tlsFromFiles>[0]): TlsOptions;
  /** A file that only means something over TLS, given for a connection that is not. */
  notTls(variable: string, path: string | undefined, how: string): void;
}

function kafkaOf(settings: EngineSettings, check: Check): EngineConnections['kafka'] {
  const kafka: EngineConnections['kafka'] = {};
  if (settings.KAFKA_SSL === 'true') {
    kafka.ssl = check.tls({
      ca: file('KAFKA_SSL_CA_FILE', settings.KAFKA_SSL_CA_FILE),
      cert: file('KAFKA_SSL_CERT_FILE', settings.KAFKA_SSL_CERT_FILE),
      key: file('KAFKA_SSL_KEY_FILE', settings.KAFKA_SSL_KEY_FILE),
    });
  } else {
    for (const variable of ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE'] as const) {
      check.notTls(variable, settings[variable], 'set KAFKA_SSL=true');
    }
  }
  const { KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = settings;
  if (mechanism === undefined) {
    if (username !== undefined || password !== undefined) {
      check.problem('KAFKA_SASL_MECHANISM', 'is required with a SASL user name or password (plain, scram-sha-256 or scram-sha-512)');
    }
    return kafka;
  }
  if (username === undefined) check.problem('KAFKA_SASL_USERNAME', `is required with KAFKA_SASL_MECHANISM`);
  if (password === undefined) check.problem('KAFKA_SASL_PASSWORD', `is required with KAFKA_SASL_MECHANISM (or KAFKA_SASL_PASSWORD_FILE)`);
  // PLAIN hands the password to the broker as it is: only inside TLS. SCRAM never sends it.
  if (mechanism === 'plain' && !kafka.ssl) {
    check.problem('KAFKA_SASL_MECHANISM', 'plain sends the password as it is: it needs KAFKA_SSL=true');
  }
  if (username !== undefined && password !== undefined) kafka.sasl = { mechanism, username, password };
  return kafka;
}

/** URL options of the MongoDB driver that turn the check of the server's certificate or name off. */
const MONGO_UNVERIFIED = ['tlsinsecure', 'tlsallowinvalidcertificates', 'tlsallowinvalidhostnames'];

function mongoOf(settings: EngineSettings, check: Check): EngineConnections['mongo'] {
  const url = settings.MONGO_URL;
  if (url === undefined) return {};
  const srv = url.startsWith('mongodb+srv://');
  if (!srv && !url.startsWith('mongodb://')) {
    check.problem('MONGO_URL', 'must start with mongodb:// or mongodb+srv://');
    return {};
  }
  // Option names are case-insensitive; the URL's userinfo may hold a `?` only percent-encoded.
  const query = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
  const option = (name: string) => [...query].find(([key]) => key.toLowerCase() === name)?.[1];
  for (const name of MONGO_UNVERIFIED) {
    if (option(name) === 'true') {
      check.problem('MONGO_URL', `${name} turns the check of the server's certificate off, which is refused`);
    }
  }
  if (option('sslvalidate') === 'false') {
    check.problem('MONGO_URL', "sslValidate=false turns the check of the server's certificate off, which is refused");
  }
  const tlsOption = option('tls') ?? option('ssl');
  // mongodb+srv:// is TLS unless told otherwise.
  const tlsOn = tlsOption === 'true' || (srv && tlsOption !== 'false');
  if (!tlsOn) {
    check.notTls('MONGO_TLS_CA_FILE', settings.MONGO_TLS_CA_FILE, 'add tls=true to MONGO_URL');
    return {};
  }
  return { tls: true, ...check.tls({ ca: file('MONGO_TLS_CA_FILE', settings.MONGO_TLS_CA_FILE) }) };
}

function redisOf(settings: EngineSettings, check: Check): EngineConnections['redis'] {
  let tlsOn = settings.REDIS_TLS === 'true';
  if (!settings.clustered && settings.REDIS_URL !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(settings.REDIS_URL);
    } catch {
      check.problem('REDIS_URL', 'is not a URL (redis://host:port or rediss://host:port)');
    }
    if (url && url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
      check.problem('REDIS_URL', 'must start with redis:// or rediss:// (TLS)');
    } else if (url) {
      // ioredis would take options from the query over the ones set here: they are not read at all.
      if (url.search !== '') check.problem('REDIS_URL', 'takes no query options: use the REDIS_* variables');
      if (url.protocol === 'rediss:') {
        if (settings.REDIS_TLS === 'false') check.problem('REDIS_TLS', 'is false but REDIS_URL is rediss:// (TLS)');
        tlsOn = true;
      }
      if (url.username !== '' && settings.REDIS_USERNAME !== undefined) {
        check.problem('REDIS_USERNAME', 'is set and REDIS_URL names a user too: name it once');
      }
      if (url.password !== '' && settings.REDIS_PASSWORD !== undefined) {
        check.problem('REDIS_PASSWORD', 'is set and REDIS_URL carries a password too: give it once');
      }
    }
  }
  const redis: EngineConnections['redis'] = {};
  if (tlsOn) redis.tls = check.tls({ ca: file('REDIS_TLS_CA_FILE', settings.REDIS_TLS_CA_FILE) });
  else check.notTls('REDIS_TLS_CA_FILE', settings.REDIS_TLS_CA_FILE, 'set REDIS_TLS=true or use rediss://');
  if (settings.REDIS_USERNAME !== undefined) redis.username = settings.REDIS_USERNAME;
  if (settings.REDIS_PASSWORD !== undefined) redis.password = settings.REDIS_PASSWORD;
  return redis;
}
