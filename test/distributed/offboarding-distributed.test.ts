import { randomUUID } from 'node:crypto';
import type { AccessLogPage } from '@rsd/contracts';
import { signDevToken } from '@rsd/platform';
import { describeWithInfra, request } from '@rsd/testkit';
import { accessLogTopicRecords } from '../support/access-log-topic';
import { startDistributedProduct, type DistributedProduct } from '../support/distributed-product';
import { eventually } from '../support/embedded-process';
import { everyCollection, readableIn } from '../support/leak-search';
import { offboardOneOfTwo } from '../support/offboarding-scenarios';
import { createAuthorization, eraseRecipient } from '../support/organization-admin';

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

  test("when one grant's recipient is erased, then its reads on the access-log topic no longer open, and the access log keeps their entries without an address", async () => {
    const org = `erased-${runId}`;
    const address = '192.0.2.57';
    const token = await signDevToken(product!.jwtSecret, { org, scope: 'authorizations:write' });
    const { urls, env } = product!;
    const grant = await createAuthorization(urls.credentials, org, token, {
      recipientType: 'auditor',
      recipientName: `Erased Recipient ${runId}`,
      scopes: ['qr_score'],
    });
    // Read once the read API knows the grant (no score yet: a refusal after the lookup, which the access log records).
    await eventually(async () => {
      const read = await request(`${urls.readApi}/v1/customers/${grant.clientId}/score`, {
        headers: { 'x-api-key': grant.apiKey, 'x-forwarded-for': address },
      });
      return read.status === 404 ? read : undefined;
    }, 30_000);
    // Before the erasure the topic's records of the read open to its address (none holds it in clear).
    const before = await eventually(async () => {
      const found = await accessLogTopicRecords(env, [grant.clientId]);
      return found.opened.some((record) => record.clientAddress === address) ? found : undefined;
    }, 30_000);
    expect(readableIn(before.raw, [address])).toEqual([]);

    await eraseRecipient(urls.credentials, org, token, grant.clientId);

    const after = await accessLogTopicRecords(env, [grant.clientId]);
    expect(after.opened.length).toBeGreaterThanOrEqual(before.opened.length);
    expect(new Set(after.opened.map((record) => record.clientAddress))).toEqual(new Set([null]));
    expect(readableIn(after.raw, [address])).toEqual([]);
    const listed = await request<AccessLogPage>(`${urls.credentials}/v1/organizations/${org}/authorizations/${grant.clientId}/access-log`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(listed.status).toBe(200);
    expect(listed.body.items.length).toBeGreaterThanOrEqual(1);
    expect(listed.body.items.every((item) => item.clientAddress === null)).toBe(true);
  }, 120_000);
});
