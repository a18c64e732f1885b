import { randomBytes, randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Consumer, type KafkaConfig } from 'kafkajs';
import { EVENT_TYPES, TOPICS } from '@rsd/contracts';
import { signDevToken } from '@rsd/platform';
import { aScoreSubmission, request, startWebhookReceiver, type WebhookReceiver } from '@rsd/testkit';
import { eventually } from './embedded-process';
import * as orgAdmin from './organization-admin';
import { startService, type ServiceProcess } from './service-process';

/** Decision 52's bound: a lost replica's work resumes on another within this. */
const TAKEOVER_BOUND_MS = 15_000;
const WEBHOOKS = 12;
const ROUNDS = 10;

/** The engines a run of the scenarios is on, and how its own databases are dropped afterwards. */
export interface ScaleOutEngines {
  /** What the services get besides what they inherit (the engines' addresses, when not inherited). */
  env: Record<string, string>;
  /** The suite's own Kafka client: the brokers, and TLS and SASL when the engines are secured. */
  kafka: Pick<KafkaConfig, 'brokers' | 'ssl' | 'sasl'>;
  cleanup: (databases: string[]) => Promise<void>;
}

export interface ScaleOutOptions {
  /** Names the run's organization, databases and consumer group, and labels its figures. */
  prefix: string;
  engines: () => Promise<ScaleOutEngines>;
  /** Also the shares: two notifier replicas working the queue, then a third joining. */
  sharing: boolean;
}

/**
 * Decision 52 on the distributed runtime as processes, inside the caller's describe: notifier replicas
 * sharing one delivery queue, credentials replicas sharing one relay and expiry check, on real Kafka,
 * MongoDB-wire and Redis; a real HTTP receiver in this process. A notifier with attempts in flight is
 * killed (SIGKILL), then the credentials replica that leads the relay. The leases keep their default
 * timing: the bound checked is the one shipped. The single-server engines run it with the shares
 * (test/distributed), the clustered and secured ones the kills alone (test/faults).
 */
export function scaleOutScenarios(options: ScaleOutOptions): void {
  const runId = randomUUID().slice(0, 8);
  const ORG = `${options.prefix}-${runId}`;
  const jwtSecret = randomBytes(32).toString('base64url');
  const PORTS = { credentials: [18771, 18772], scoreIngest: 18773, notifiers: [18774, 18775, 18776] };
  let engines: ScaleOutEngines;
  const started: ServiceProcess[] = [];
  let env: Record<string, string>;
  let notifierEnv: Record<string, string>;
  let credentials: ServiceProcess[];
  let scoreIngest: ServiceProcess;
  let notifiers: ServiceProcess[];
  let receiver: WebhookReceiver;
  let token: string;
  let consumer: Consumer;
  /** The organization's authorization events as Kafka holds them, in order. */
  const events: { id: string; type: string; clientId: string }[] = [];
  const credentialsWithHooks: orgAdmin.IssuedCredential[] = [];
  let scoreDay = 60;

  async function start(name: string, port: number, serviceEnv: Record<string, string>): Promise<ServiceProcess> {
    const service = await startService(name, port, serviceEnv);
    started.push(service);
    return service;
  }

  /** One sample of a metric of a process, summed over its label sets that contain `labels`. */
  async function metric(service: ServiceProcess, name: string, labels = ''): Promise<number> {
    const text = await fetch(`${service.url}/metrics`).then((answer) => answer.text());
    return text
      .split('\n')
      .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      .filter((line) => line.includes(labels))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  }

  const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

  /** One score for the organization, newer than the last: a change for every grant's webhook. */
  async function postRound(round: number): Promise<void> {
    scoreDay -= 1;
    await orgAdmin.postScore(scoreIngest.url, token, aScoreSubmission({ organizationId: ORG, scoreDate: daysAgo(scoreDay), score: round }));
  }

  /** What the receiver got since `from`: each delivery's (grant, score), and how often each webhook-id came. */
  function receivedSince(from: number) {
    const deliveries = receiver.received.slice(from).map((delivery) => {
      const { data } = JSON.parse(delivery.body) as { data: { clientId: string; score: number } };
      return { id: String(delivery.headers['webhook-id']), key: `${data.clientId}:${data.score}`, at: delivery.at, body: delivery.body };
    });
    const times = new Map<string, number>();
    for (const { id } of deliveries) times.set(id, (times.get(id) ?? 0) + 1);
    return { deliveries, keys: new Set(deliveries.map(({ key }) => key)), repeated: [...times.values()].filter((n) => n > 1).length };
  }

  /** Posts `ROUNDS` scores (scores `first`…) and waits until every grant's webhook has each one. */
  async function deliverRounds(first: number, from: number, timeoutMs = 60_000) {
    for (let round = first; round < first + ROUNDS; round += 1) await postRound(round);
    const expected = WEBHOOKS * ROUNDS;
    return eventually(async () => {
      const got = receivedSince(from);
      return Promise.resolve(got.keys.size >= expected ? got : undefined);
    }, timeoutMs);
  }

  const leasesHeld = (service: ServiceProcess, work: string) => metric(service, 'rsd_leases_held', `work="${work}"`);

  /** The 32 queue shards each replica holds, once all are held and every replica holds at least `least`. */
  const sharedShards = (least: number) =>
    eventually(async () => {
      const held = await Promise.all(notifiers.map((notifier) => leasesHeld(notifier, 'notifier-queue')));
      return held.every((n) => n >= least) && held.reduce((a, b) => a + b, 0) === 32 ? held : undefined;
    }, 30_000);

  beforeAll(async () => {
    engines = await options.engines();
    env = {
      ...engines.env,
      CREDENTIALS_DB: `${options.prefix}_credentials_${runId}`,
      READ_VIEWS_DB: `${options.prefix}_views_${runId}`,
      NOTIFIER_DB: `${options.prefix}_notifier_${runId}`,
      JWT_HS256_SECRET: jwtSecret,
      LOG_LEVEL: 'info',
      KAFKA_TOPIC_PARTITIONS: '3',
      SCORE_INGEST_PORT: String(PORTS.scoreIngest),
      FAILED_AUTH_LIMIT_PER_MINUTE: '100000',
      EVENT_LOG_PUBLISH_DEADLINE_MS: '2000',
    };
    notifierEnv = { ...env, WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'), WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
    token = await signDevToken(jwtSecret, { org: ORG, scope: 'authorizations:write scores:write' });
    credentials = [];
    for (const port of PORTS.credentials) credentials.push(await start('credentials', port, { ...env, CREDENTIALS_PORT: String(port) }));
    scoreIngest = await start('score-ingest', PORTS.scoreIngest, env);
    notifiers = [];
    for (const port of PORTS.notifiers.slice(0, 2))
      notifiers.push(await start('notifier', port, { ...notifierEnv, NOTIFIER_PORT: String(port) }));
    // The organization's events from the start of the log, once the services have made its topics.
    const kafka = new Kafka({ ...engines.kafka, clientId: `${options.prefix}-${runId}`, logLevel: logLevel.NOTHING });
    consumer = kafka.consumer({ groupId: `${options.prefix}-test-${runId}` });
    await consumer.connect();
    // A service makes its topics as it starts, which may finish after it answers.
    await eventually(
      () =>
        consumer
          .subscribe({ topics: [TOPICS.authorizations], fromBeginning: true })
          .then(() => true)
          .catch(() => undefined),
      30_000,
      500,
    );
    // The test's own consumer group can be handed a partition again after a rebalance (a loaded machine misses a
    // heartbeat) and read records it already had: each offset is kept once, so `events` is the log itself and a
    // record twice in it is one the product wrote twice.
    const seen = new Set<string>();
    await consumer.run({
      eachMessage: ({ partition, message }) => {
        const at = `${partition}:${message.offset}`;
        if (seen.has(at)) return Promise.resolve();
        seen.add(at);
        const event = JSON.parse(message.value?.toString() ?? '{}') as {
          id: string;
          type: string;
          data?: { clientId?: string; organizationId?: string };
        };
        if (event.data?.organizationId === ORG) events.push({ id: event.id, type: event.type, clientId: event.data.clientId ?? '' });
        return Promise.resolve();
      },
    });
    receiver = await startWebhookReceiver(0);
    // Grants, each with a webhook on the receiver (through either credentials replica): their owners fall in several queue shards.
    for (let n = 0; n < WEBHOOKS; n += 1) {
      const credential = await orgAdmin.createAuthorization(credentials[n % 2]!.url, ORG, token, {
        recipientType: 'insurance_provider',
        scopes: ['qr_score'],
      });
      credentialsWithHooks.push(credential);
      const created = await eventually(async () => {
        const answer = await request<{ code?: string }>(`${notifiers[n % 2]!.url}/v1/customers/${credential.clientId}/webhooks`, {
          method: 'POST',
          headers: { 'x-api-key': credential.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ url: receiver.url, events: ['score.updated'] }),
        });
        return answer.status === 404 && answer.body.code === 'CREDENTIAL_NOT_FOUND' ? undefined : answer;
      }, 20_000);
      expect(created.status).toBe(201);
    }
  }, 240_000);

  afterAll(async () => {
    for (const service of started) await service.stop();
    await receiver?.close();
    await consumer?.disconnect();
    if (env) await engines.cleanup([env.CREDENTIALS_DB!, env.READ_VIEWS_DB!, env.NOTIFIER_DB!]);
  }, 60_000);

  // Shares: two replicas, then a third joining; a takeover alone where only it is asked for.
  if (options.sharing) {
    test('when two notifier replicas share the queue, then each works some of its shards and every delivery arrives with its webhook-id once', async () => {
      const shares = await sharedShards(1);

      const got = await deliverRounds(1, receiver.received.length);

      process.stderr.write(`[${options.prefix}] two notifiers: shards ${shares.join('/')}, ${got.deliveries.length} deliveries\n`);
      expect(got.repeated).toBe(0);
      expect(got.deliveries).toHaveLength(WEBHOOKS * ROUNDS);
      for (const notifier of notifiers)
        expect(await metric(notifier, 'webhook_deliveries_total', 'outcome="succeeded"')).toBeGreaterThan(0);
    }, 120_000);

    test('when a third replica joins, then the shards are handed over among three and still every delivery arrives once', async () => {
      const port = PORTS.notifiers[2]!;
      notifiers.push(await start('notifier', port, { ...notifierEnv, NOTIFIER_PORT: String(port) }));
      const shares = await sharedShards(10);

      const got = await deliverRounds(11, receiver.received.length);

      process.stderr.write(`[${options.prefix}] three notifiers: shards ${shares.join('/')}, ${got.deliveries.length} deliveries\n`);
      expect(got.repeated).toBe(0);
      expect(got.deliveries).toHaveLength(WEBHOOKS * ROUNDS);
      // A handover is a release, not a takeover: nothing was counted as possibly repeated.
      for (const notifier of notifiers) expect(await metric(notifier, 'rsd_webhook_takeover_resumed_total')).toBe(0);
    }, 120_000);
  }

  test('when a notifier is killed with attempts in flight, then its deliveries resume on the others within 15 s with the same webhook-id, none lost, repeats counted', async () => {
    // The replica killed below holds shards of its own (where the shares were not measured first, they may still be settling).
    await sharedShards(1);
    const from = receiver.received.length;
    // Answers held back: the killed replica has attempts under way.
    receiver.slowDown(3_000);
    for (let round = 21; round < 21 + ROUNDS; round += 1) await postRound(round);
    await eventually(() => Promise.resolve(receiver.received.length - from >= WEBHOOKS ? true : undefined), 20_000);
    const victim = notifiers[1]!;
    const survivors = notifiers.filter((notifier) => notifier !== victim);
    const killedAt = performance.now();
    await victim.stop('SIGKILL');
    receiver.slowDown(0);

    const got = await eventually(async () => {
      const now = receivedSince(from);
      return Promise.resolve(now.keys.size >= WEBHOOKS * ROUNDS ? now : undefined);
    }, 60_000);

    const lastAt = Math.max(...got.deliveries.map(({ at }) => at));
    const resumed = (await Promise.all(survivors.map((notifier) => metric(notifier, 'rsd_webhook_takeover_resumed_total')))).reduce(
      (a, b) => a + b,
      0,
    );
    process.stderr.write(
      `[${options.prefix}] kill -9: every delivery in ${(lastAt - killedAt).toFixed(0)} ms after the kill; ${got.repeated} webhook-ids twice, ${resumed} counted as possibly repeated\n`,
    );
    expect(lastAt - killedAt).toBeLessThan(TAKEOVER_BOUND_MS);
    // Nothing lost, and a repeat is the same message: same webhook-id, same body.
    for (const { id, body } of got.deliveries)
      expect(got.deliveries.filter((other) => other.id === id).every((other) => other.body === body)).toBe(true);
    expect(got.repeated).toBeLessThanOrEqual(resumed);
    // Every shard is held again within the takeover bound: the dead replica's last leases expire one by one.
    const held = await eventually(async () => {
      const shares = await Promise.all(survivors.map((notifier) => leasesHeld(notifier, 'notifier-queue')));
      const total = shares.reduce((a, b) => a + b, 0);
      return total === 32 ? total : undefined;
    }, TAKEOVER_BOUND_MS);
    expect(held).toBe(32);
  }, 120_000);

  test('when the credentials leader is killed, then the other replica runs the relay and the expiry within 15 s; every acknowledged write is published, each expiry once', async () => {
    const leaders = await eventually(async () => {
      const held = await Promise.all(credentials.map((replica) => leasesHeld(replica, 'credentials-relay')));
      return held.reduce((a, b) => a + b, 0) === 1 ? held : undefined;
    }, 30_000);
    const leader = credentials[leaders.indexOf(1)]!;
    const follower = credentials[leaders.indexOf(0)]!;
    const create = (replica: ServiceProcess, expiresInMs?: number) =>
      request<{ clientId: string }>(`${replica.url}/v1/organizations/${ORG}/authorizations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          recipientType: 'insurance_provider',
          scopes: ['qr_score'],
          ...(expiresInMs ? { expiresAt: new Date(Date.now() + expiresInMs).toISOString() } : {}),
        }),
      }).catch(() => undefined);
    const acknowledged: string[] = [];
    const expiring: string[] = [];
    // Writes on both replicas, some expiring before, during and after the takeover.
    for (let n = 0; n < 6; n += 1) {
      for (const replica of [leader, follower]) {
        const answer = await create(replica, 2_000 + n * 3_000);
        if (answer?.status === 201) {
          acknowledged.push(answer.body.clientId);
          expiring.push(answer.body.clientId);
        }
      }
    }
    const killedAt = Date.now();
    await leader.stop('SIGKILL');
    // Writes go on through the survivor while it is not the leader yet: acknowledged, published later.
    for (let n = 0; n < 10; n += 1) {
      const answer = await create(follower);
      if (answer?.status === 201) acknowledged.push(answer.body.clientId);
    }
    const tookOverAt = await eventually(
      async () => ((await leasesHeld(follower, 'credentials-relay')) === 1 ? Date.now() : undefined),
      30_000,
      200,
    );

    const created = (clientId: string) =>
      events.some((event) => event.type === EVENT_TYPES.authorizationCreated && event.clientId === clientId);
    await eventually(() => Promise.resolve(acknowledged.every(created) ? true : undefined), 30_000);
    const expiredOnce = await eventually(() => {
      const expiries = expiring.map(
        // An expiry is one event: republished after a takeover it keeps its id (counted below), a second expiry would not.
        (clientId) =>
          new Set(
            events.filter((event) => event.type === EVENT_TYPES.authorizationExpired && event.clientId === clientId).map(({ id }) => id),
          ).size,
      );
      return Promise.resolve(expiries.every((n) => n >= 1) ? expiries : undefined);
    }, 60_000);

    const republished = await metric(follower, 'rsd_outbox_takeover_republished_total');
    const ids = events.map((event) => event.id);
    const repeatedEvents = ids.length - new Set(ids).size;
    process.stderr.write(
      `[${options.prefix}] credentials: relay taken over ${tookOverAt - killedAt} ms after the kill; ${acknowledged.length} writes acknowledged, all published; ${repeatedEvents} events twice, ${republished} counted\n`,
    );
    expect(tookOverAt - killedAt).toBeLessThan(TAKEOVER_BOUND_MS);
    expect(expiredOnce.every((n) => n === 1)).toBe(true);
    expect(repeatedEvents).toBeLessThanOrEqual(republished);
  }, 180_000);
}
