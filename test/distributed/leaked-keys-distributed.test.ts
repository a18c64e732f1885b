import { describeWithInfra, startSecretScanningProvider, type SecretScanningProvider } from '@rsd/testkit';
import { leakedKeyScenarios, leakedKeySecrets } from '../support/leaked-key-scenarios';
import { scenarioProduct } from '../support/scenario-product';

const FAILED_AUTH_LIMIT = 300;

/**
 * Decision 43 on the distributed runtime: credentials, score ingest and two read-API replicas as
 * separate processes on real Kafka, a MongoDB-compatible server and Redis (the per-address budget is
 * counted there, across the services). A reported key must be refused by both replicas within
 * decision 29's bound of the 200; the suite's own secret-scanning provider serves its keys on loopback.
 */
describeWithInfra('kafka', 'leaked keys on the distributed runtime, two read-API replicas', (kafkaTarget) => {
  let provider: SecretScanningProvider;
  const product = scenarioProduct(kafkaTarget, {
    prefix: 'leak',
    settings: async () => {
      provider = await startSecretScanningProvider();
      return {
        SECRET_SCANNING_KEYS_URL: provider.keysUrl,
        FAILED_AUTH_LIMIT_PER_MINUTE: String(FAILED_AUTH_LIMIT),
        EVENT_LOG_PUBLISH_DEADLINE_MS: '2000',
        FEED_STALENESS_BOUND_MS: '5000',
        FEED_RECOVERY_GRACE_MS: '3000',
      };
    },
  });
  afterAll(() => provider?.close());

  const scenarios = leakedKeyScenarios(() => ({
    ...product.target(),
    provider,
    failedAuthLimitPerMinute: FAILED_AUTH_LIMIT,
  }));
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 180_000);

  test('when the run is over, then no reported key is in any log, Kafka topic or MongoDB collection', async () => {
    const haystacks = await product.haystacks();
    expect(leakedKeySecrets.length).toBeGreaterThanOrEqual(8);
    expect(leakedKeySecrets.filter((secretValue) => haystacks.some((haystack) => haystack.includes(secretValue)))).toEqual([]);
  }, 120_000);
});
