import { loadConfig } from '@rsd/platform';
import { runtimeConfigSchema, type EngineConnections } from '@rsd/runtime';

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
  });
  return {
    brokers: config.KAFKA_BROKERS,
    redisNodes: config.REDIS_CLUSTER_NODES,
    mongoUrl: config.MONGO_URL!,
    connections: config.engines,
  };
}
