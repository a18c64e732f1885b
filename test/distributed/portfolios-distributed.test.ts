import { randomBytes, randomUUID } from 'node:crypto';
import { signDevToken } from '@rsd/platform';
import { describeWithInfra, type StartedServer } from '@rsd/testkit';
import {
  COMPOSE_DATABASES,
  COMPOSE_PORTS,
  COMPOSE_TEST_TIMINGS,
  composeService,
  onComposeStack,
  stackEnv,
  stackGateway,
} from '../support/compose-stack';
import {
  productEnv,
  scenarioTarget,
  startInto,
  startLoopbackNotifier,
  startReadReplicas,
  stopProduct,
} from '../support/distributed-product';
import { startDistributedServers } from '../support/distributed-servers';
import { everyCollection, everyTopicRecord } from '../support/leak-search';
import { keyAuthorityScenarios } from '../support/key-authority-scenarios';
import {
  portfolioScenarios,
  portfolioSecrets,
  portfolioWebhookScenarios,
  type PortfolioWebhookTarget,
} from '../support/portfolio-scenarios';
import { TEST_RESPONSE_SIGNING_KEYS, type ServiceProcess } from '../support/service-process';

const ACCOUNT_LIMIT = 300;

/**
 * Decision 42's portfolios on the distributed runtime: credentials, score ingest and two read-API
 * replicas as separate processes on real Kafka, a MongoDB-compatible server and Redis (or the
 * Compose stack's containers with RSD_DISTRIBUTED_STACK=compose). Every read of the scenarios is
 * checked on both replicas; the account limit is counted across them in Redis.
 */
describeWithInfra('kafka', 'portfolios on the distributed runtime, two read-API replicas', (kafkaTarget) => {
  const runId = randomUUID().slice(0, 8);
  const secret = onComposeStack ? (process.env.JWT_HS256_SECRET ?? '') : randomBytes(32).toString('base64url');
  const PORTS = onComposeStack
    ? COMPOSE_PORTS
    : { credentials: 18581, scoreIngest: 18582, readApi1: 18580, readApi2: 18590, notifier: 18583 };
  const servers: StartedServer[] = [];
  const services: ServiceProcess[] = [];
  let env: Record<string, string>;
  let credentials: ServiceProcess;
  let scoreIngest: ServiceProcess;
  let readApis: ServiceProcess[] = [];
  let notifier: ServiceProcess;
  /** Where the webhooks' receivers listen, as the notifier reaches them. */
  let receiverHost = '127.0.0.1';

  beforeAll(async () => {
    if (onComposeStack) {
      env = stackEnv(COMPOSE_DATABASES, COMPOSE_TEST_TIMINGS);
      credentials = await composeService('credentials', PORTS.credentials);
      scoreIngest = await composeService('score-ingest', PORTS.scoreIngest);
      readApis = [await composeService('read-api-1', PORTS.readApi1), await composeService('read-api-2', PORTS.readApi2)];
      notifier = await composeService('notifier', PORTS.notifier);
      receiverHost = await stackGateway();
      return;
    }
    env = {
      ...(await startDistributedServers(kafkaTarget(), servers)),
      // Every request comes from 127.0.0.1, and the scenarios present keys that are refused on purpose (productEnv's limit).
      ...productEnv(
        { prefix: 'pf', runId, jwtSecret: secret, ports: PORTS },
        {
          RESPONSE_SIGNING_KEYS: TEST_RESPONSE_SIGNING_KEYS,
          EXPIRY_CHECK_INTERVAL_MS: '500',
          ACCOUNT_RATE_LIMIT_PER_MINUTE: String(ACCOUNT_LIMIT),
          EVENT_LOG_PUBLISH_DEADLINE_MS: '2000',
          FEED_STALENESS_BOUND_MS: '5000',
          FEED_RECOVERY_GRACE_MS: '3000',
        },
      ),
    };
    credentials = await startInto(services, 'credentials', PORTS.credentials, env);
    scoreIngest = await startInto(services, 'score-ingest', PORTS.scoreIngest, env);
    notifier = await startLoopbackNotifier(services, PORTS.notifier, env);
    readApis.push(...(await startReadReplicas(env, [PORTS.readApi1, PORTS.readApi2], (port) => `pf-${port}`, services)));
  }, 180_000);

  const outputs: string[] = [];
  afterAll(async () => {
    // The Compose stack's databases are the stack's: only this run's own are dropped.
    await stopProduct(services, outputs, servers, onComposeStack ? undefined : env);
  }, 60_000);

  const scenarios = portfolioScenarios(() => ({
    ...scenarioTarget({ credentials, scoreIngest, readApis }, secret),
    accountLimitPerMinute: ACCOUNT_LIMIT,
  }));
  for (const [name, scenario] of Object.entries(scenarios)) test(name, scenario, 180_000);
  const webhookTarget = (): PortfolioWebhookTarget => ({
    credentials: credentials.url,
    scoreIngest: scoreIngest.url,
    readApis: readApis.map((replica) => replica.url),
    notifier: notifier.url,
    receiverHost,
    tokenFor: (org: string) => signDevToken(secret, { org, scope: 'authorizations:write scores:write' }),
    accountLimitPerMinute: ACCOUNT_LIMIT,
  });
  const webhookScenarios = portfolioWebhookScenarios(webhookTarget);
  for (const [name, scenario] of Object.entries(webhookScenarios)) test(name, scenario, 180_000);
  // Decision 50: the old key only reads, and webhooks go with the key that made them, on the notifier's own views and queue.
  const keyAuthority = keyAuthorityScenarios(webhookTarget);
  afterAll(() => keyAuthority.cleanUp());
  for (const [name, scenario] of Object.entries(keyAuthority.scenarios)) test(name, scenario, 180_000);

  test('when the run is over, then no account key or claim token is in any log, Kafka topic or MongoDB collection', async () => {
    const haystacks = [...outputs, ...[credentials, scoreIngest, notifier, ...readApis].map((service) => service.output())];
    const { values } = await everyTopicRecord(env.KAFKA_BROKERS ?? '', `pf-leak-${runId}`);
    haystacks.push(...values);
    const notifierDb = onComposeStack ? COMPOSE_DATABASES.notifier : `pf_notifier_${runId}`;
    haystacks.push(
      ...(await everyCollection(env.MONGO_URL ?? '', [env.CREDENTIALS_DB ?? '', env.READ_VIEWS_DB ?? '', notifierDb])).documents,
    );
    expect(portfolioSecrets.length).toBeGreaterThanOrEqual(10);
    expect(portfolioSecrets.filter((secretValue) => haystacks.some((haystack) => haystack.includes(secretValue)))).toEqual([]);
  }, 120_000);
});
