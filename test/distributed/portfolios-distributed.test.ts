import { describeWithInfra } from '@rsd/testkit';
import {
  COMPOSE_DATABASES,
  COMPOSE_PORTS,
  COMPOSE_TEST_TIMINGS,
  composeService,
  onComposeStack,
  stackEnv,
  stackGateway,
} from '../support/compose-stack';
import { keyAuthorityScenarios } from '../support/key-authority-scenarios';
import { portfolioScenarios, portfolioSecrets, portfolioWebhookScenarios, SCENARIO_ACCOUNT_LIMIT } from '../support/portfolio-scenarios';
import { scenarioProduct } from '../support/scenario-product';

/**
 * Decision 42's portfolios on the distributed runtime: credentials, score ingest and two read-API
 * replicas as separate processes on real Kafka, a MongoDB-compatible server and Redis (or the
 * Compose stack's containers with RSD_DISTRIBUTED_STACK=compose). Every read of the scenarios is
 * checked on both replicas; the account limit is counted across them in Redis.
 */
describeWithInfra('kafka', 'portfolios on the distributed runtime, two read-API replicas', (kafkaTarget) => {
  /** Where the webhooks' receivers listen, as the notifier reaches them. */
  let receiverHost = '127.0.0.1';
  const product = scenarioProduct(kafkaTarget, {
    prefix: 'pf',
    secret: onComposeStack ? (process.env.JWT_HS256_SECRET ?? '') : undefined,
    ports: { credentials: 18581, scoreIngest: 18582, readApi1: 18580, readApi2: 18590, notifier: 18583 },
    notifier: true,
    // Every request comes from 127.0.0.1, and the scenarios present keys that are refused on purpose (productEnv's limit).
    settings: () => ({
      EXPIRY_CHECK_INTERVAL_MS: '500',
      ACCOUNT_RATE_LIMIT_PER_MINUTE: String(SCENARIO_ACCOUNT_LIMIT),
      EVENT_LOG_PUBLISH_DEADLINE_MS: '2000',
      FEED_STALENESS_BOUND_MS: '5000',
      FEED_RECOVERY_GRACE_MS: '3000',
    }),
    ...(onComposeStack
      ? {
          onStack: async () => {
            receiverHost = await stackGateway();
            return {
              env: { ...stackEnv(COMPOSE_DATABASES, COMPOSE_TEST_TIMINGS), NOTIFIER_DB: COMPOSE_DATABASES.notifier },
              credentials: await composeService('credentials', COMPOSE_PORTS.credentials),
              scoreIngest: await composeService('score-ingest', COMPOSE_PORTS.scoreIngest),
              readApis: [
                await composeService('read-api-1', COMPOSE_PORTS.readApi1),
                await composeService('read-api-2', COMPOSE_PORTS.readApi2),
              ],
              notifier: await composeService('notifier', COMPOSE_PORTS.notifier),
            };
          },
        }
      : {}),
  });

  const scenarios = portfolioScenarios(() => ({
    ...product.target(),
    accountLimitPerMinute: SCENARIO_ACCOUNT_LIMIT,
  }));
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 180_000);
  const webhookTarget = () => ({
    ...product.target(),
    notifier: product.notifier.url,
    receiverHost,
    accountLimitPerMinute: SCENARIO_ACCOUNT_LIMIT,
  });
  const webhookScenarios = portfolioWebhookScenarios(webhookTarget);
  for (const [name, scenario] of Object.entries(webhookScenarios)) test(name, scenario, 180_000);
  // Decision 50: the old key only reads, and webhooks go with the key that made them, on the notifier's own views and queue.
  const keyAuthority = keyAuthorityScenarios(webhookTarget);
  afterAll(() => keyAuthority.cleanUp());
  for (const [name, scenario] of Object.entries(keyAuthority.scenarios)) test(name, scenario, 180_000);

  test('when the run is over, then no account key or claim token is in any log, Kafka topic or MongoDB collection', async () => {
    const haystacks = await product.haystacks();
    expect(portfolioSecrets.length).toBeGreaterThanOrEqual(10);
    expect(portfolioSecrets.filter((secretValue) => haystacks.some((haystack) => haystack.includes(secretValue)))).toEqual([]);
  }, 120_000);
});
