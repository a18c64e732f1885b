import { randomUUID } from 'node:crypto';
import { signDevToken } from '@rsd/platform';
import { describeWithInfra } from '@rsd/testkit';
import { accessLogTopicRecords } from '../support/access-log-topic';
import { startDistributedProduct, type DistributedProduct } from '../support/distributed-product';
import { everyCollection } from '../support/leak-search';
import { offboardOneOfTwo } from '../support/offboarding-scenarios';

/** The offboardings' record keeps the organization's id by design (ids and instants, 30 days). */
const NOT_STORES = new Set(['offboardings']);

/**
 * Decision 56 on the distributed runtime: the four services as processes on real Kafka, a MongoDB-wire
 * server and Redis. The credentials service learns that the read API and the notifier have purged from
 * their words on rsd.purges.v1; the event log itself is not searched (its payloads are sealed apart), but the
 * access-log topic is: it holds no address in clear, and the offboarded grant's no longer open.
 */
describeWithInfra('kafka', 'offboarding on the distributed runtime', (kafkaTarget) => {
  let product: DistributedProduct | undefined;
  const runId = randomUUID().slice(0, 8);

  beforeAll(async () => {
    // Reads from the addresses the scenario names (X-Forwarded-For, one trusted hop), soon on the access-log topic.
    product = await startDistributedProduct(kafkaTarget(), { TRUST_PROXY_HOPS: '1', ACCESS_LOG_FLUSH_INTERVAL_MS: '200' });
  }, 180_000);

  afterAll(() => product?.stop(), 60_000);

  test('when one of two organizations is offboarded, then no database of the product holds its names, scores or grants, and the other still reads', async () => {
    const env = product!.env;
    await offboardOneOfTwo(
      {
        ...product!.urls,
        tokenFor: (org, scope) => signDevToken(product!.jwtSecret, { org, scope }),
        storedRows: async () => {
          const databases = [env.CREDENTIALS_DB!, env.READ_VIEWS_DB!, env.NOTIFIER_DB!];
          const { collections, documents } = await everyCollection(env.MONGO_URL!, databases);
          return documents.filter((_, at) => !NOT_STORES.has(collections[at]!));
        },
        logLines: () => product!.outputs().join('\n'),
        accessLogTopic: (clientIds) => accessLogTopicRecords(env, clientIds),
      },
      { offboarded: `offboarded-${runId}`, kept: `kept-${runId}` },
    );
  }, 240_000);
});
