import { randomBytes, randomUUID } from 'node:crypto';
import { describeWithInfra, startSecretScanningProvider, type SecretScanningProvider, type StartedServer } from '@rsd/testkit';
import { productEnv, scenarioTarget, startInto, startReadReplicas, stopProduct } from '../support/distributed-product';
import { startDistributedServers } from '../support/distributed-servers';
import { leakedKeyScenarios, leakedKeySecrets } from '../support/leaked-key-scenarios';
import { everyCollection, everyTopicRecord } from '../support/leak-search';
import { freePort } from '../support/raw-http';
import { TEST_RESPONSE_SIGNING_KEYS, type ServiceProcess } from '../support/service-process';

const FAILED_AUTH_LIMIT = 300;

/**
 * Decision 43 on the distributed runtime: credentials, score ingest and two read-API replicas as
 * separate processes on real Kafka, a MongoDB-compatible server and Redis (the per-address budget is
 * counted there, across the services). A reported key must be refused by both replicas within
 * decision 29's bound of the 200; the suite's own secret-scanning provider serves its keys on loopback.
 */
describeWithInfra('kafka', 'leaked keys on the distributed runtime, two read-API replicas', (kafkaTarget) => {
  const runId = randomUUID().slice(0, 8);
  const secret = randomBytes(32).toString('base64url');
  const servers: StartedServer[] = [];
  const services: ServiceProcess[] = [];
  let env: Record<string, string>;
  let provider: SecretScanningProvider;
  let credentials: ServiceProcess;
  let scoreIngest: ServiceProcess;
  const readApis: ServiceProcess[] = [];

  beforeAll(async () => {
    provider = await startSecretScanningProvider();
    const [credentialsPort, scoreIngestPort] = [await freePort(), await freePort()];
    env = {
      ...(await startDistributedServers(kafkaTarget(), servers)),
      ...productEnv(
        { prefix: 'leak', runId, jwtSecret: secret, ports: { credentials: credentialsPort, scoreIngest: scoreIngestPort } },
        {
          RESPONSE_SIGNING_KEYS: TEST_RESPONSE_SIGNING_KEYS,
          SECRET_SCANNING_KEYS_URL: provider.keysUrl,
          FAILED_AUTH_LIMIT_PER_MINUTE: String(FAILED_AUTH_LIMIT),
          EVENT_LOG_PUBLISH_DEADLINE_MS: '2000',
          FEED_STALENESS_BOUND_MS: '5000',
          FEED_RECOVERY_GRACE_MS: '3000',
        },
      ),
    };
    credentials = await startInto(services, 'credentials', credentialsPort, env);
    scoreIngest = await startInto(services, 'score-ingest', scoreIngestPort, env);
    readApis.push(...(await startReadReplicas(env, [await freePort(), await freePort()], (_, index) => `leak-${index + 1}`, services)));
  }, 180_000);

  const outputs: string[] = [];
  afterAll(async () => {
    await stopProduct(services, outputs, servers, env);
    await provider?.close();
  }, 60_000);

  const scenarios = leakedKeyScenarios(() => ({
    ...scenarioTarget({ credentials, scoreIngest, readApis }, secret),
    provider,
    failedAuthLimitPerMinute: FAILED_AUTH_LIMIT,
  }));
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 180_000);

  test('when the run is over, then no reported key is in any log, Kafka topic or MongoDB collection', async () => {
    const haystacks = [...outputs, ...services.map((service) => service.output())];
    haystacks.push(...(await everyTopicRecord(env.KAFKA_BROKERS ?? '', `leak-search-${runId}`)).values);
    haystacks.push(...(await everyCollection(env.MONGO_URL ?? '', [env.CREDENTIALS_DB ?? '', env.READ_VIEWS_DB ?? ''])).documents);
    expect(leakedKeySecrets.length).toBeGreaterThanOrEqual(8);
    expect(leakedKeySecrets.filter((secretValue) => haystacks.some((haystack) => haystack.includes(secretValue)))).toEqual([]);
  }, 120_000);
});
