import { loadConfig } from '@rsd/platform';
import { runtimeConfigSchema, type EngineConnections } from '@rsd/runtime';
import { TEST_SUBJECT_KEYS_MASTER_KEY } from './service-process';

/** The clustered engines as `scripts/infra.sh cluster env` describes them, read as the product reads them. */
export interface ClusteredEngines {
  brokers: string[];
  redisNodes: { host: string; port: number }[];
  mongoUrl: string;
  /** TLS and credentials (decision 53): what the services get, and the suites' own clients too. */
  connections: EngineConnections;
}

/**
 * The clustered engines from the environment (`out="$(scripts/infra.sh cluster up)" && eval "$out"`),
 * through the runtime's own configuration: its secrets' files read, its certificate files checked.
 */
export function clusteredEngines(): ClusteredEngines {
  const env = process.env;
  if ((env.KAFKA_BROKERS ?? '').split(',').length < 3 || (env.REDIS_CLUSTER_NODES ?? '').split(',').length < 6) {
    throw new Error(
      'this suite runs on the clustered engines: out="$(scripts/infra.sh cluster up)" && eval "$out" (KAFKA_BROKERS, REDIS_CLUSTER_NODES, MONGO_URL or MONGO_URL_FILE, …)',
    );
  }
  const config = loadConfig(runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'mongo', 'redis'] }), {
    ...env,
    RUNTIME: 'distributed',
    // Required of a process that reaches the engines (decision 56); only the engines' settings are used here.
    SUBJECT_KEYS_MASTER_KEY: TEST_SUBJECT_KEYS_MASTER_KEY,
  });
  return {
    brokers: config.KAFKA_BROKERS,
    redisNodes: config.REDIS_CLUSTER_NODES,
    mongoUrl: config.MONGO_URL!,
    connections: config.engines,
  };
}

/**
 * TLS and SASL for a suite's own Kafka client, from the environment as the product reads it
 * (KAFKA_SSL, KAFKA_SSL_CA_FILE, KAFKA_SASL_*, their `_FILE`s): nothing for plaintext servers, what
 * the secured ones demand otherwise (the Compose stack's, `scripts/engine-secrets.sh compose-env`).
 */
export function kafkaSecurityFromEnvironment(env: NodeJS.ProcessEnv = process.env): EngineConnections['kafka'] {
  // Read as a service that reaches Kafka reads them (one that needs no engine reads no engine setting);
  // only the security settings are used, so any broker list will do.
  const config = loadConfig(runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka'] }), {
    KAFKA_BROKERS: env.KAFKA_BROKERS || '127.0.0.1:9092',
    KAFKA_SSL: env.KAFKA_SSL,
    KAFKA_SSL_CA_FILE: env.KAFKA_SSL_CA_FILE,
    KAFKA_SSL_CERT_FILE: env.KAFKA_SSL_CERT_FILE,
    KAFKA_SSL_KEY_FILE: env.KAFKA_SSL_KEY_FILE,
    KAFKA_SASL_MECHANISM: env.KAFKA_SASL_MECHANISM,
    KAFKA_SASL_USERNAME: env.KAFKA_SASL_USERNAME,
    KAFKA_SASL_USERNAME_FILE: env.KAFKA_SASL_USERNAME_FILE,
    KAFKA_SASL_PASSWORD: env.KAFKA_SASL_PASSWORD,
    KAFKA_SASL_PASSWORD_FILE: env.KAFKA_SASL_PASSWORD_FILE,
    RUNTIME: 'distributed',
    // Required of a process that reaches the engines (decision 56); only the engines' settings are used here.
    SUBJECT_KEYS_MASTER_KEY: TEST_SUBJECT_KEYS_MASTER_KEY,
  });
  return config.engines.kafka;
}
