import { signDevToken } from '@rsd/platform';
import { describeWithInfra } from '@rsd/testkit';
import { startDistributedProduct, type DistributedProduct } from '../support/distributed-product';
import { everyTopicRecord } from '../support/leak-search';
import { sealedLogScenarios } from '../support/sealed-log-scenarios';

/**
 * Decision 56's sealed events on the distributed runtime: the four services as processes on real
 * Kafka, a MongoDB-wire server (the subjects' keys in a database of their own) and Redis; the raw
 * records of every product topic are searched.
 */
describeWithInfra('kafka', 'sealed events on the distributed runtime: the Kafka topics', (kafkaTarget) => {
  let product: DistributedProduct | undefined;

  beforeAll(async () => {
    product = await startDistributedProduct(kafkaTarget());
  }, 180_000);

  afterAll(() => product?.stop(), 60_000);

  const scenarios = sealedLogScenarios(() => ({
    credentials: product!.urls.credentials,
    scoreIngest: product!.urls.scoreIngest,
    readApis: [product!.urls.readApi],
    tokenFor: (org) => signDevToken(product!.jwtSecret, { org, scope: 'authorizations:write scores:write' }),
    logValues: async () => (await everyTopicRecord(process.env.KAFKA_BROKERS!, `sealed-events-${Date.now()}`)).values,
  }));
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 120_000);
});
