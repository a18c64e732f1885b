import { describeWithInfra } from '@rsd/testkit';
import { kafkaSecurityFromEnvironment } from '../support/clustered-engines';
import { dropDatabases, startDistributedServers } from '../support/distributed-servers';
import { scaleOutScenarios } from '../support/scale-out-scenarios';
import type { StartedServer } from '@rsd/testkit';

/**
 * Decision 52 on the single-server engines (Kafka, the MongoDB-wire server, Redis): notifier replicas
 * sharing the queue (two, then three), a notifier killed with attempts in flight, the credentials
 * relay leader killed (test/support/scale-out-scenarios.ts).
 */
describeWithInfra(
  'kafka',
  'every service scales out (decision 52): notifier and credentials replicas on real Kafka, MongoDB and Redis',
  (kafkaTarget) => {
    const servers: StartedServer[] = [];
    scaleOutScenarios({
      prefix: 'scale',
      sharing: true,
      engines: async () => {
        const env = await startDistributedServers(kafkaTarget(), servers);
        return {
          env,
          kafka: { brokers: env.KAFKA_BROKERS.split(','), ...kafkaSecurityFromEnvironment({ ...process.env, ...env }) },
          cleanup: async (databases) => {
            if (env.MONGO_URL) await dropDatabases(env.MONGO_URL, databases);
            for (const server of servers) await server.stop();
          },
        };
      },
    });
  },
);
