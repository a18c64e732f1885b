import { CONSOLE_AUDIENCES, CONSOLE_SIGNING_KEY, consoleSigner, consoleSigningKeyOf } from '@rsd/platform';
import { describeWithInfra, request } from '@rsd/testkit';
import { alertScenarios, alertSecrets } from '../support/alert-scenarios';
import { scenarioProduct } from '../support/scenario-product';

/**
 * Decision 44's alerts on the distributed runtime: credentials (which reads the access log's topic
 * in a consumer group of its own for them), score ingest, the notifier and two read-API replicas as
 * processes of the suite's own on real Kafka, a MongoDB-compatible server and Redis. Processes of its
 * own on the Compose stack's servers too: the scenarios read from addresses they name in
 * X-Forwarded-For, which the stack's read APIs rightly do not trust.
 */
describeWithInfra('kafka', 'organization alerts on the distributed runtime, two read-API replicas', (kafkaTarget) => {
  const consoleKey = CONSOLE_SIGNING_KEY.generate();
  const consoleSigning = consoleSigner(consoleSigningKeyOf(consoleKey));
  const product = scenarioProduct(kafkaTarget, {
    prefix: 'al',
    ports: { credentials: 18681, scoreIngest: 18682, readApi1: 18680, readApi2: 18690, notifier: 18683 },
    notifier: true,
    settings: async () => ({
      EXPIRY_CHECK_INTERVAL_MS: '500',
      ACCESS_LOG_FLUSH_INTERVAL_MS: '200',
      // Addresses from X-Forwarded-For, as behind one proxy; the refused keys must not reach the per-address limit.
      TRUST_PROXY_HOPS: '1',
      // The console's own tokens (decision 51), which both APIs verify with its public key alone.
      CONSOLE_PUBLIC_KEY: JSON.stringify((await consoleSigning.jwks()).keys[0]),
    }),
  });

  const alerts = alertScenarios(() => ({
    ...product.target(),
    notifier: product.notifier.url,
    receiverHost: '127.0.0.1',
    keyPrefix: 'rsk',
  }));
  afterAll(() => alerts.cleanUp());

  for (const [name, scenario] of Object.entries(alerts.scenarios)) test(name, scenario, 180_000);

  test("when the console presents its own token for an organization, then that organization's alert webhooks take it, no other's, and the credentials API (another audience) never", async () => {
    const org = `al-console-${product.runId}`;
    const token = await consoleSigning.sign(CONSOLE_AUDIENCES.notifier, {
      organizationId: org,
      subject: 'admin@console',
      personIssuer: 'https://idp.example',
      scope: 'authorizations:write',
    });
    // Neither the console's private key nor a token made with it may show in a log, topic or collection (the last test).
    alertSecrets.push(consoleKey, token);
    const call = (url: string, method = 'GET', body?: unknown) =>
      request<Record<string, unknown>>(url, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    const created = await call(`${product.notifier.url}/v1/organizations/${org}/webhooks`, 'POST', {
      url: 'http://127.0.0.1:9/alerts',
      events: ['authorization.first_use'],
    });
    expect(created.status).toBe(201);
    alertSecrets.push(String(created.body.secret));
    expect((await call(`${product.notifier.url}/v1/organizations/${org}/webhooks`)).body).toEqual({
      webhooks: [expect.objectContaining({ id: created.body.id, events: ['authorization.first_use'], status: 'active' })],
    });
    expect((await call(`${product.notifier.url}/v1/organizations/${org}-other/webhooks`)).status).toBe(403);
    expect((await call(`${product.credentials.url}/v1/organizations/${org}/authorizations`)).status).toBe(401);
  }, 60_000);

  test('when the run is over, then no key or claim token is in any log, Kafka topic or MongoDB collection', async () => {
    const haystacks = await product.haystacks();
    expect(alertSecrets.length).toBeGreaterThanOrEqual(8);
    expect(alertSecrets.filter((value) => haystacks.some((haystack) => haystack.includes(value)))).toEqual([]);
  }, 120_000);
});
