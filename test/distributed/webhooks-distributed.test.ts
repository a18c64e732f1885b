import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { MongoClient } from 'mongodb';
import { ageMongoFirstAttempts } from '../support/aged-deliveries';
import { signDevToken } from '@rsd/platform';
import {
  aScoreSubmission,
  describeWithInfra,
  request,
  startInfra,
  startWebhookReceiver,
  webhookSignatureVerifies,
  type ReceivedDelivery,
  type StartedServer,
  type WebhookReceiver,
} from '@rsd/testkit';
import { COMPOSE_DATABASES, COMPOSE_PORTS, composeService, onComposeStack, stackGateway } from '../support/compose-stack';
import { startDistributedServers } from '../support/distributed-servers';
import { everyTopicRecord } from '../support/leak-search';
import { eventually, REPO_ROOT } from '../support/embedded-process';
import * as orgAdmin from '../support/organization-admin';
import { startService, TEST_SUBJECT_KEYS_MASTER_KEY, type ServiceProcess } from '../support/service-process';
import { describeWebhookLifecycle } from '../support/webhook-lifecycle';
import { metricsNotExported, metricsUsedByMonitoring } from '../support/monitoring';

/**
 * Webhooks on the distributed runtime as deployed (decisions 26–28): credentials, score ingest, the
 * read API and the notifier as four processes on real Kafka, a MongoDB-compatible server and Redis;
 * a recipient's receiver is a real HTTP server on loopback in this process. With
 * RSD_DISTRIBUTED_STACK=compose (test/support/compose-stack.ts), the Compose stack's containers, and
 * the receivers listen on the address of this machine that the containers reach (their network's gateway).
 */
describeWithInfra('kafka', 'webhooks on the distributed runtime, four processes over real Kafka, MongoDB and Redis', (kafkaTarget) => {
  const runId = randomUUID().slice(0, 8);
  const ORG = `hooks-${runId}`;
  // On the stack, the secrets it was started with.
  const jwtSecret = onComposeStack ? (process.env.JWT_HS256_SECRET ?? '') : randomBytes(32).toString('base64url');
  // What a deployment keeps in its Secret: 32 random bytes, base64 (never the same twice here).
  const webhookSecretKey = onComposeStack ? (process.env.WEBHOOK_SECRET_KEY ?? '') : randomBytes(32).toString('base64');
  const PORTS = onComposeStack
    ? {
        readApi: COMPOSE_PORTS.readApi1,
        credentials: COMPOSE_PORTS.credentials,
        scoreIngest: COMPOSE_PORTS.scoreIngest,
        notifier: COMPOSE_PORTS.notifier,
        refused: 18484,
      }
    : { readApi: 18480, credentials: 18481, scoreIngest: 18482, notifier: 18483, refused: 18484 };
  /** A second notifier as deployed (without the development flag of decision 28), with a database of its own. */
  const STRICT_NOTIFIER_PORT = 18485;
  let strictNotifier: ServiceProcess | undefined;
  let receiverHost = '127.0.0.1';
  const servers: StartedServer[] = [];
  let env: Record<string, string>;
  let notifierEnv: Record<string, string>;
  let credentials: ServiceProcess;
  let scoreIngest: ServiceProcess;
  let readApi: ServiceProcess;
  let notifier: ServiceProcess;
  const receivers: WebhookReceiver[] = [];
  const issuedKeys: string[] = [];
  const issuedClientIds: string[] = [];
  const webhookSecrets: string[] = [];
  let token: string;

  type Credential = orgAdmin.IssuedCredential;

  type Received = ReceivedDelivery;

  /** A recipient's endpoint (the testkit's), on the address the notifier reaches; closed after the suite. */
  async function startReceiver(failures: number): Promise<WebhookReceiver> {
    const receiver = await startWebhookReceiver(failures, receiverHost);
    receivers.push(receiver);
    return receiver;
  }

  /** Standard Webhooks recomputed with node:crypto, independently of the notifier's signing code. */
  const signatureVerifies = webhookSignatureVerifies;

  const payloadOf = (delivery: Received) => JSON.parse(delivery.body) as { type: string; timestamp: string; data: Record<string, unknown> };

  async function until<T>(check: () => T | undefined, timeoutMs: number): Promise<T> {
    return eventually(() => Promise.resolve(check()), timeoutMs, 10);
  }

  async function createCredential(scopes = ['qr_score']): Promise<Credential> {
    const created = await orgAdmin.createAuthorization(credentials.url, ORG, token, { recipientType: 'insurance_provider', scopes });
    issuedKeys.push(created.apiKey);
    issuedClientIds.push(created.clientId);
    return created;
  }

  const postScore = (score: number, scoreDate: string) =>
    orgAdmin.postScore(scoreIngest.url, token, aScoreSubmission({ organizationId: ORG, scoreDate, score }));

  const webhooksUrl = (credential: Credential) => `${notifier.url}/v1/customers/${credential.clientId}/webhooks`;

  /** Through the notifier's API with the credential's key, once the notifier's own view knows the credential. */
  async function createWebhook(credential: Credential, url: string, events: string[]) {
    const answer = await eventually(async () => {
      const created = await request<{ id: string; secret: string; status: string; events: string[]; code?: string }>(
        webhooksUrl(credential),
        {
          method: 'POST',
          headers: { 'x-api-key': credential.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ url, events }),
        },
      );
      // 404 CREDENTIAL_NOT_FOUND until the notifier's projection has the authorization.
      return created.status === 404 && created.body.code === 'CREDENTIAL_NOT_FOUND' ? undefined : created;
    }, 20_000);
    expect(answer.status).toBe(201);
    webhookSecrets.push(answer.body.secret);
    return answer.body;
  }

  const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

  beforeAll(async () => {
    // On the stack, its servers as published on loopback (the refused notifier below needs no Redis).
    const infraEnv = onComposeStack
      ? { RUNTIME: 'distributed', KAFKA_BROKERS: process.env.KAFKA_BROKERS!, MONGO_URL: process.env.MONGO_URL!, REDIS_URL: '' }
      : await startDistributedServers(kafkaTarget(), servers);
    env = {
      ...infraEnv,
      CREDENTIALS_DB: onComposeStack ? COMPOSE_DATABASES.credentials : `hooks_credentials_${runId}`,
      READ_VIEWS_DB: onComposeStack ? COMPOSE_DATABASES.readViews : `hooks_views_${runId}`,
      NOTIFIER_DB: onComposeStack ? COMPOSE_DATABASES.notifier : `hooks_notifier_${runId}`,
      JWT_HS256_SECRET: jwtSecret,
      LOG_LEVEL: 'info',
      KAFKA_TOPIC_PARTITIONS: '3',
      CREDENTIALS_PORT: String(PORTS.credentials),
      SCORE_INGEST_PORT: String(PORTS.scoreIngest),
      READ_API_PORT: String(PORTS.readApi),
      // Polling the notifier until its view has a new credential counts as failed authentication, all from 127.0.0.1.
      FAILED_AUTH_LIMIT_PER_MINUTE: '100000',
      OUTBOX_RELAY_INTERVAL_MS: '500',
      EVENT_LOG_PUBLISH_DEADLINE_MS: '2000',
    };
    // Only the notifier gets the sealing key; receivers on loopback need decision 28's development flag.
    notifierEnv = {
      ...env,
      NOTIFIER_PORT: String(PORTS.notifier),
      WEBHOOK_SECRET_KEY: webhookSecretKey,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    };
    token = await signDevToken(jwtSecret, { org: ORG, scope: 'authorizations:write scores:write' });
    if (onComposeStack) {
      receiverHost = await stackGateway();
      credentials = await composeService('credentials', PORTS.credentials);
      scoreIngest = await composeService('score-ingest', PORTS.scoreIngest);
      readApi = await composeService('read-api-1', PORTS.readApi);
      notifier = await composeService('notifier', PORTS.notifier);
      return;
    }
    credentials = await startService('credentials', PORTS.credentials, env);
    scoreIngest = await startService('score-ingest', PORTS.scoreIngest, env);
    readApi = await startService('read-api', PORTS.readApi, env);
    notifier = await startService('notifier', PORTS.notifier, notifierEnv);
  }, 180_000);

  afterAll(async () => {
    await strictNotifier?.stop();
    // The stack's services and databases stay: the stack is brought down by whoever brought it up.
    if (!onComposeStack) for (const service of [notifier, readApi, scoreIngest, credentials]) await service?.stop();
    for (const receiver of receivers) await receiver.close();
    if (env?.MONGO_URL && !onComposeStack) {
      const client = await MongoClient.connect(env.MONGO_URL);
      for (const name of [env.CREDENTIALS_DB!, env.READ_VIEWS_DB!, env.NOTIFIER_DB!, `${env.NOTIFIER_DB!}_strict`]) {
        await client.db(name).dropDatabase();
      }
      await client.close();
    }
    for (const server of servers) await server.stop();
  }, 60_000);

  test('when a score is posted, then a receiver that fails the first attempt gets it signed within 5 s and again on the retry with the same webhook-id; on revoke it gets authorization.ended once', async () => {
    const credential = await createCredential(['qr_score']);
    const receiver = await startReceiver(1);
    const webhook = await createWebhook(credential, receiver.url, ['score.updated', 'authorization.ended']);
    expect(webhook).toMatchObject({ status: 'active', events: ['score.updated', 'authorization.ended'] });
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // The secret is shown once: never listed again.
    const listed = await request(webhooksUrl(credential), { headers: { 'x-api-key': credential.apiKey } });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(webhook.secret);

    await postScore(77, daysAgo(1));
    const posted = performance.now();
    const first = await until(() => receiver.received[0], 5_000);
    const second = await until(() => receiver.received[1], 15_000);
    process.stderr.write(
      `[distributed] webhook: first attempt ${(first.at - posted).toFixed(0)} ms after the score's 202, retry ${(second.at - first.at).toFixed(0)} ms after the failure\n`,
    );
    expect(first.at - posted).toBeLessThan(5_000);
    expect(first.answered).toBe(500);
    expect(second.answered).toBe(204);
    for (const delivery of [first, second]) {
      expect(signatureVerifies(delivery, webhook.secret)).toBe(true);
      expect(delivery.headers['content-type']).toMatch(/^application\/json/);
      expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(payloadOf(delivery)).toMatchObject({
        type: 'score.updated',
        data: { clientId: credential.clientId, scoreDate: daysAgo(1), score: 77 },
      });
      // qr_score only: never more than the scopes allow.
      expect(payloadOf(delivery).data).not.toHaveProperty('pillarScores');
    }
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    // Signed with another secret, it would not verify: the check above is not vacuous.
    expect(signatureVerifies(first, `whsec_${randomBytes(32).toString('base64')}`)).toBe(false);

    // The read API, a process of its own, serves the same score from the same log.
    const score = await eventually(async () => {
      const answer = await request(`${readApi.url}/v1/customers/${credential.clientId}/score`, {
        headers: { 'x-api-key': credential.apiKey },
      });
      return answer.status === 200 ? answer.body : undefined;
    }, 20_000);
    expect(score).toMatchObject({ clientId: credential.clientId, score: 77, scoreDate: daysAgo(1) });

    // The recipient sees both attempts in the notifier's log of deliveries, newest first.
    type Attempt = {
      messageId: string;
      eventType: string;
      attempt: number;
      status: string;
      responseCode: number | null;
      failure: string | null;
    };
    const attempts = await eventually(async () => {
      const answer = await request<{ deliveries: Attempt[] }>(`${webhooksUrl(credential)}/${webhook.id}/deliveries`, {
        headers: { 'x-api-key': credential.apiKey },
      });
      return answer.status === 200 && answer.body.deliveries.length >= 2 ? answer.body.deliveries : undefined;
    }, 10_000);
    expect(attempts).toEqual([
      expect.objectContaining({
        messageId: first.headers['webhook-id'],
        eventType: 'score.updated',
        attempt: 2,
        status: 'succeeded',
        responseCode: 204,
        failure: null,
      }),
      expect.objectContaining({
        messageId: first.headers['webhook-id'],
        eventType: 'score.updated',
        attempt: 1,
        status: 'failed',
        responseCode: 500,
        failure: 'response_status',
      }),
    ]);

    const revoked = await request(`${credentials.url}/v1/organizations/${ORG}/authorizations/${credential.clientId}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(revoked.status).toBe(200);
    const revokedAt = performance.now();
    const ended = await until(() => receiver.received.find((delivery) => payloadOf(delivery).type === 'authorization.ended'), 5_000);
    process.stderr.write(`[distributed] webhook: authorization.ended ${(ended.at - revokedAt).toFixed(0)} ms after the revoke's 200\n`);
    expect(signatureVerifies(ended, webhook.secret)).toBe(true);
    expect(ended.answered).toBe(204);
    expect(payloadOf(ended)).toMatchObject({ type: 'authorization.ended', data: { clientId: credential.clientId, reason: 'revoked' } });
    expect(ended.headers['webhook-id']).not.toBe(first.headers['webhook-id']);

    // Once ended, nothing more: a later score reaches no one, and the event is not sent twice.
    await postScore(60, daysAgo(0));
    // Fixed, for want of a witness: the distributed notifier serves neither its position in the log nor its
    // queue, and a later delivery elsewhere proves nothing (deliveries are sent side by side).
    await new Promise((done) => setTimeout(done, 3_000));
    expect(receiver.received.map((delivery) => payloadOf(delivery).type)).toEqual([
      'score.updated',
      'score.updated',
      'authorization.ended',
    ]);
    // Its webhooks answer as the read API would for a revoked credential.
    const afterRevoke = await request(webhooksUrl(credential), { headers: { 'x-api-key': credential.apiKey } });
    expect(afterRevoke.status).toBe(401);
    expect(afterRevoke.body.code).toBe('CREDENTIAL_INACTIVE');
  }, 90_000);

  test('when the four processes are scraped, then every metric the alerting rules and the dashboard read is exported, by the service its selector names (decision 40)', async () => {
    const scrape = async (service: ServiceProcess) => (await fetch(`${service.url}/metrics`)).text();
    const expositions = {
      'read-api': await scrape(readApi),
      credentials: await scrape(credentials),
      'score-ingest': await scrape(scoreIngest),
      notifier: await scrape(notifier),
    };
    expect(metricsNotExported(metricsUsedByMonitoring(), expositions)).toEqual([]);
    // This runtime samples the projection's lag (every 5 s; the embedded log has none).
    const lag = await eventually(
      async () => /^event_consumer_lag\{[^}]*group="read-api-projections\.[^"]*"[^}]*\} \d+$/m.exec(await scrape(readApi))?.[0],
      15_000,
      500,
    );
    expect(lag).toContain('service="read-api"');
  }, 30_000);

  test('when WEBHOOK_SECRET_KEY is missing or not 32 bytes, then the notifier refuses to start on the distributed runtime (exit 1, naming the variable)', async () => {
    const { WEBHOOK_SECRET_KEY: _omitted, ...withoutKey } = notifierEnv;
    const tries: Record<string, string>[] = [
      { ...withoutKey, NOTIFIER_PORT: String(PORTS.refused) },
      { ...withoutKey, NOTIFIER_PORT: String(PORTS.refused), WEBHOOK_SECRET_KEY: randomBytes(16).toString('base64') },
    ];
    for (const tried of tries) {
      const { code, output } = await runToExit(tried, 60_000);
      expect(code).toBe(1);
      expect(output).toContain('WEBHOOK_SECRET_KEY');
      if (tried.WEBHOOK_SECRET_KEY) expect(output).not.toContain(tried.WEBHOOK_SECRET_KEY);
    }
  }, 150_000);

  test('when the run is over, then no API key, webhook secret or sealing key is in any log, Kafka topic or MongoDB collection, the notifier database included', async () => {
    // One more subscription that was never delivered to: its secret is only in the 201 and, sealed, in the store.
    const credential = await createCredential(['qr_score']);
    await createWebhook(credential, 'http://127.0.0.1:9/never', ['score.updated']);
    const haystacks = [credentials, scoreIngest, readApi, notifier].map((service) => service.output());
    expect(haystacks[3]).toContain('webhook delivery failed; will retry');

    // One record at a time: a broker that served earlier runs (benchmarks) may hold more than one string can.
    for (const value of await kafkaValues()) haystacks.push(value);

    const client = await MongoClient.connect(env.MONGO_URL!);
    const searched: Record<string, string[]> = {};
    let webhookDocuments: Record<string, unknown>[] = [];
    try {
      for (const name of [env.CREDENTIALS_DB!, env.READ_VIEWS_DB!, env.NOTIFIER_DB!]) {
        const db = client.db(name);
        searched[name] = [];
        for (const { name: collection } of await db.listCollections().toArray()) {
          searched[name].push(collection);
          const documents = await db.collection(collection).find().toArray();
          if (name === env.NOTIFIER_DB && collection === 'webhooks') webhookDocuments = documents;
          haystacks.push(JSON.stringify(documents));
        }
      }
    } finally {
      await client.close();
    }

    // The notifier's own database was searched, its subscriptions hold their secrets sealed (AES-256-GCM, v1.…).
    expect(searched[env.NOTIFIER_DB!]).toEqual(expect.arrayContaining(['webhooks', 'webhook_deliveries', 'webhook_attempts']));
    // This run's subscriptions (the stack's database may hold earlier runs' too).
    webhookDocuments = webhookDocuments.filter((document) => issuedClientIds.includes(String(document.clientId)));
    expect(webhookDocuments).toHaveLength(2);
    for (const document of webhookDocuments) expect(String(document.sealedSecret)).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(issuedKeys.length).toBeGreaterThanOrEqual(2);
    expect(webhookSecrets).toHaveLength(2);

    const needles = [...issuedKeys, ...webhookSecrets, ...webhookSecrets.map((secret) => secret.slice('whsec_'.length)), webhookSecretKey];
    expect(needles.filter((needle) => haystacks.some((haystack) => haystack.includes(needle)))).toEqual([]);
  }, 120_000);

  describeWebhookLifecycle('distributed', () => ({
    notifierUrl: notifier.url,
    credentialsUrl: credentials.url,
    scoreIngestUrl: scoreIngest.url,
    tokenFor: (org) => signDevToken(jwtSecret, { org, scope: 'authorizations:write scores:write' }),
    receiverHost,
    ageFirstAttempts: (webhookId) => ageMongoFirstAttempts(env.MONGO_URL!, env.NOTIFIER_DB!, webhookId),
    strict: () => {
      if (!strictNotifier) throw new Error('the strict notifier did not start');
      return {
        notifierUrl: strictNotifier.url,
        credentialsUrl: credentials.url,
        tokenFor: (org: string) => signDevToken(jwtSecret, { org, scope: 'authorizations:write scores:write' }),
      };
    },
  }));

  beforeAll(async () => {
    const { WEBHOOK_ALLOW_PRIVATE_TARGETS: _flag, ...deployed } = notifierEnv;
    // On the stack its Redis is not published: this suite's own notifier process gets a Redis of its own (Testcontainers).
    const redis = onComposeStack ? await startInfra('redis', { source: 'testcontainers' }) : undefined;
    if (redis) servers.push(redis);
    strictNotifier = await startService('notifier', STRICT_NOTIFIER_PORT, {
      ...deployed,
      ...(redis ? { REDIS_URL: redis.url } : {}),
      NOTIFIER_PORT: String(STRICT_NOTIFIER_PORT),
      NOTIFIER_DB: `${env.NOTIFIER_DB!}_strict`,
    });
  }, 120_000);

  /** Every record of every rsd.* topic, key and value. */
  async function kafkaValues(): Promise<string[]> {
    const { values } = await everyTopicRecord(env.KAFKA_BROKERS!, `hooks-leak-${runId}`);
    // This run's organization is in them: the topics read are the ones this run wrote to.
    expect(values.some((value) => value.includes(ORG))).toBe(true);
    return values;
  }

  /** The notifier's main.js with `tried` as its environment, until it exits (or `timeoutMs`, a failure). */
  function runToExit(tried: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; output: string }> {
    if (onComposeStack) return runImageToExit(tried.WEBHOOK_SECRET_KEY ?? '', timeoutMs);
    const child = spawn(process.execPath, [resolve(REPO_ROOT, 'services/notifier/dist/main.js')], {
      cwd: REPO_ROOT,
      env: {
        SUBJECT_KEYS_MASTER_KEY: TEST_SUBJECT_KEYS_MASTER_KEY,
        ...process.env,
        ...tried,
        WEBHOOK_SECRET_KEY: tried.WEBHOOK_SECRET_KEY ?? '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    return new Promise((done, failed) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        failed(new Error(`the notifier was still running after ${timeoutMs} ms:\n${output}`));
      }, timeoutMs);
      child.once('exit', (code) => {
        clearTimeout(timer);
        done({ code, output });
      });
    });
  }

  /**
   * On the stack: a one-off notifier container of the stack's image and configuration, with only the
   * key changed. Removed afterwards rather than with --rm: Podman's Docker API then reports exit 0.
   */
  async function runImageToExit(key: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
    const name = `rsd-notifier-refused-${runId}-${randomUUID().slice(0, 4)}`;
    const args = ['compose', 'run', '--no-deps', '--no-TTY', '--name', name, '--env', `WEBHOOK_SECRET_KEY=${key}`, 'notifier'];
    const child = spawn('docker', args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    try {
      return await new Promise((done, failed) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          failed(new Error(`the notifier container was still running after ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        child.once('close', (code) => {
          clearTimeout(timer);
          done({ code, output });
        });
      });
    } finally {
      spawnSync('docker', ['rm', '--force', name], { stdio: 'ignore' });
    }
  }
});
