import { randomBytes, randomUUID } from 'node:crypto';
import { CONSOLE_AUDIENCES, CONSOLE_SIGNING_KEY, consoleSigner, consoleSigningKeyOf } from '@rsd/platform';
import { request } from '@rsd/testkit';
import { describeWithInfra, type StartedServer } from '@rsd/testkit';
import { alertScenarios, alertSecrets } from '../support/alert-scenarios';
import {
  productDatabases,
  productEnv,
  scenarioTarget,
  startInto,
  startLoopbackNotifier,
  startReadReplicas,
  stopProduct,
} from '../support/distributed-product';
import { startDistributedServers } from '../support/distributed-servers';
import { everyCollection, everyTopicRecord } from '../support/leak-search';
import { TEST_RESPONSE_SIGNING_KEYS, type ServiceProcess } from '../support/service-process';

/**
 * Decision 44's alerts on the distributed runtime: credentials (which reads the access log's topic
 * in a consumer group of its own for them), score ingest, the notifier and two read-API replicas as
 * processes of the suite's own on real Kafka, a MongoDB-compatible server and Redis. Processes of its
 * own on the Compose stack's servers too: the scenarios read from addresses they name in
 * X-Forwarded-For, which the stack's read APIs rightly do not trust.
 */
describeWithInfra('kafka', 'organization alerts on the distributed runtime, two read-API replicas', (kafkaTarget) => {
  const runId = randomUUID().slice(0, 8);
  const secret = randomBytes(32).toString('base64url');
  const consoleKey = CONSOLE_SIGNING_KEY.generate();
  const consoleSigning = consoleSigner(consoleSigningKeyOf(consoleKey));
  const PORTS = { credentials: 18681, scoreIngest: 18682, readApi1: 18680, readApi2: 18690, notifier: 18683 };
  const servers: StartedServer[] = [];
  const services: ServiceProcess[] = [];
  let env: Record<string, string>;
  let credentials: ServiceProcess;
  let scoreIngest: ServiceProcess;
  let notifier: ServiceProcess;
  const readApis: ServiceProcess[] = [];

  beforeAll(async () => {
    env = {
      ...(await startDistributedServers(kafkaTarget(), servers)),
      ...productEnv(
        { prefix: 'al', runId, jwtSecret: secret, ports: PORTS },
        {
          RESPONSE_SIGNING_KEYS: TEST_RESPONSE_SIGNING_KEYS,
          EXPIRY_CHECK_INTERVAL_MS: '500',
          ACCESS_LOG_FLUSH_INTERVAL_MS: '200',
          // Addresses from X-Forwarded-For, as behind one proxy; the refused keys must not reach the per-address limit.
          TRUST_PROXY_HOPS: '1',
          // The console's own tokens (decision 51), which both APIs verify with its public key alone.
          CONSOLE_PUBLIC_KEY: JSON.stringify((await consoleSigning.jwks()).keys[0]),
        },
      ),
    };
    credentials = await startInto(services, 'credentials', PORTS.credentials, env);
    scoreIngest = await startInto(services, 'score-ingest', PORTS.scoreIngest, env);
    notifier = await startLoopbackNotifier(services, PORTS.notifier, env);
    readApis.push(...(await startReadReplicas(env, [PORTS.readApi1, PORTS.readApi2], (port) => `al-${port}`, services)));
  }, 180_000);

  const alerts = alertScenarios(() => ({
    ...scenarioTarget({ credentials, scoreIngest, readApis }, secret),
    notifier: notifier.url,
    receiverHost: '127.0.0.1',
    keyPrefix: 'rsk',
  }));

  const outputs: string[] = [];
  afterAll(async () => {
    await alerts.cleanUp();
    await stopProduct(services, outputs, servers, env);
  }, 60_000);

  for (const [name, scenario] of Object.entries(alerts.scenarios)) test(name, scenario, 180_000);

  test("when the console presents its own token for an organization, then that organization's alert webhooks take it, no other's, and the credentials API (another audience) never", async () => {
    const org = `al-console-${runId}`;
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

    const created = await call(`${notifier.url}/v1/organizations/${org}/webhooks`, 'POST', {
      url: 'http://127.0.0.1:9/alerts',
      events: ['authorization.first_use'],
    });
    expect(created.status).toBe(201);
    alertSecrets.push(String(created.body.secret));
    expect((await call(`${notifier.url}/v1/organizations/${org}/webhooks`)).body).toEqual({
      webhooks: [expect.objectContaining({ id: created.body.id, events: ['authorization.first_use'], status: 'active' })],
    });
    expect((await call(`${notifier.url}/v1/organizations/${org}-other/webhooks`)).status).toBe(403);
    expect((await call(`${credentials.url}/v1/organizations/${org}/authorizations`)).status).toBe(401);
  }, 60_000);

  test('when the run is over, then no key or claim token is in any log, Kafka topic or MongoDB collection', async () => {
    const haystacks = [...outputs, ...services.map((service) => service.output())];
    haystacks.push(...(await everyTopicRecord(env.KAFKA_BROKERS ?? '', `al-leak-${runId}`)).values);
    haystacks.push(...(await everyCollection(env.MONGO_URL ?? '', productDatabases(env))).documents);
    expect(alertSecrets.length).toBeGreaterThanOrEqual(8);
    expect(alertSecrets.filter((value) => haystacks.some((haystack) => haystack.includes(value)))).toEqual([]);
  }, 120_000);
});
