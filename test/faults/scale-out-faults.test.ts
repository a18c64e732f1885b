import { clusteredEngines } from '../support/clustered-engines';
import { scaleOutScenarios } from '../support/scale-out-scenarios';

/**
 * Decision 52 on the clustered engines of `scripts/infra.sh cluster` (three Kafka brokers, a Redis
 * Cluster, the MongoDB-wire server, all secured as decision 53 has them): two notifier processes and
 * two credentials processes on the process runtime; a notifier killed with SIGKILL while its attempts
 * are in flight, then the credentials replica that leads the relay and the expiry check. Its deliveries
 * resume on the other notifier within 15 s with the same webhook-ids, the relay and the expiry are
 * taken over within 15 s, and nothing is lost (test/support/scale-out-scenarios.ts).
 */
describe('faults on the clustered engines: a notifier and the credentials leader killed (kill -9) under load', () => {
  scaleOutScenarios({
    prefix: 'scale-faults',
    sharing: false,
    engines: () => {
      const engines = clusteredEngines();
      return Promise.resolve({
        // The engines' addresses, TLS and credentials come with the environment the services inherit
        // (`cluster env`); the Redis Cluster's nodes, not a single server's URL.
        env: { RUNTIME: 'distributed', REDIS_URL: '' },
        kafka: { brokers: engines.brokers, ...engines.connections.kafka },
        // The run's databases stay with the cluster's MongoDB-wire server, which the suite's run takes down.
        cleanup: () => Promise.resolve(),
      });
    },
  });
});
