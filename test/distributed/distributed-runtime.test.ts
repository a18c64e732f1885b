import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { ACCESS_LOG_TOPIC, TOPICS } from '@rsd/contracts';
import { READ_VIEWS, credentialView, generateApiKey } from '@rsd/domain';
import { snapshotViews } from '@rsd/mongo';
import { signDevToken } from '@rsd/platform';
import { aScoreSubmission, describeWithInfra, eventually as retried, request, type StartedServer } from '@rsd/testkit';
import {
  COMPOSE_DATABASES,
  COMPOSE_PORTS,
  COMPOSE_TEST_TIMINGS,
  compose,
  composeService,
  containerHostname,
  onComposeStack,
  stackEnv,
  type ComposeService,
} from '../support/compose-stack';
import { productEnv } from '../support/distributed-product';
import { startDistributedServers } from '../support/distributed-servers';
import { kafkaSecurityFromEnvironment } from '../support/clustered-engines';
import {
  K8S_DATABASES,
  K8S_TEST_TIMINGS,
  execInReadApi,
  k8sReadReplica,
  k8sService,
  onK8sStack,
  pauseKafka,
  resumeKafka,
  type K8sService,
} from '../support/k8s-stack';
import { everyCollection, everyTopicRecord } from '../support/leak-search';
import { eventually, REPO_ROOT } from '../support/embedded-process';
import * as orgAdmin from '../support/organization-admin';
import { startService, TEST_RESPONSE_SIGNING_KEYS, type ServiceProcess } from '../support/service-process';
import { verifyResponseSignature, type PublishedKey } from '../../tools/cli/src/response-signature';

const run = promisify(execFile);

/**
 * The distributed runtime as deployed: credentials, score-ingest and two read-API replicas as
 * separate processes on real Kafka, a MongoDB-compatible server and Redis, over loopback. With
 * RSD_DISTRIBUTED_STACK=compose (test/support/compose-stack.ts) the same tests run against the
 * Compose stack's containers instead of processes of their own; with RSD_DISTRIBUTED_STACK=k8s
 * (test/support/k8s-stack.ts), against the one-node Kubernetes cluster, every read through the read
 * API's Service with its replicas standing for two of its pods.
 */
describeWithInfra('kafka', 'the distributed runtime, four processes over real Kafka, MongoDB and Redis', (kafkaTarget) => {
  const runId = randomUUID().slice(0, 8);
  const ORG = `dist-${runId}`;
  const secret = randomBytes(32).toString('base64url');
  const PORTS = onComposeStack ? COMPOSE_PORTS : { credentials: 18281, scoreIngest: 18282, readApi1: 18280, readApi2: 18290 };
  // The stack's key is the one its replicas were given; the processes sign with the test key.
  const SIGNING_KEYS = onComposeStack || onK8sStack ? (process.env.RESPONSE_SIGNING_KEYS ?? '[]') : TEST_RESPONSE_SIGNING_KEYS;
  const composeReplicas = new Map<number, ComposeService>();
  const servers: StartedServer[] = [];
  let env: Record<string, string>;
  let credentials: ServiceProcess;
  let scoreIngest: ServiceProcess;
  const readApis: ServiceProcess[] = [];
  const outputs: string[] = [];
  const issuedKeys: string[] = [];
  let token: string;
  let kafkaFromEnvironment = false;

  type Credential = orgAdmin.IssuedCredential;

  async function createCredential(scopes = ['qr_score', 'pillar_breakdown']): Promise<Credential> {
    const created = await orgAdmin.createAuthorization(credentials.url, ORG, token, { recipientType: 'insurance_provider', scopes });
    issuedKeys.push(created.apiKey);
    return created;
  }

  const postScore = (score: number, scoreDate = '2026-11-20') =>
    orgAdmin.postScore(scoreIngest.url, token, aScoreSubmission({ organizationId: ORG, scoreDate, score }));

  const read = (replica: ServiceProcess, credential: Credential, resource = 'score') =>
    request(`${replica.url}/v1/customers/${credential.clientId}/${resource}`, { headers: { 'x-api-key': credential.apiKey } });

  const readUntil = (
    replica: ServiceProcess,
    credential: Credential,
    accept: (r: Awaited<ReturnType<typeof read>>) => boolean,
    timeoutMs = 20_000,
    everyMs = 20,
  ) =>
    eventually(
      async () => {
        const answer = await read(replica, credential);
        return accept(answer) ? answer : undefined;
      },
      timeoutMs,
      everyMs,
    );

  const k8sReplicas: K8sService[] = [];
  const startReadApi = async (port: number): Promise<ServiceProcess> => {
    if (onK8sStack) {
      // The replica that stood for the pod now gone waits for the Deployment's replacement.
      const index = port === PORTS.readApi1 ? 0 : 1;
      const taken = () => k8sReplicas.filter((_, i) => i !== index).flatMap((r) => (r.pod ? [r.pod] : []));
      if (k8sReplicas[index]) await k8sReplicas[index].start();
      else k8sReplicas[index] = await k8sReadReplica(taken);
      return k8sReplicas[index];
    }
    if (!onComposeStack) return startService('read-api', port, { ...env, READ_API_PORT: String(port) });
    const service = composeReplicas.get(port) ?? (await composeService(port === PORTS.readApi1 ? 'read-api-1' : 'read-api-2', port));
    if (composeReplicas.has(port)) await service.start();
    composeReplicas.set(port, service);
    return service;
  };

  beforeAll(async () => {
    if (onComposeStack) return startOnComposeStack();
    if (onK8sStack) return startOnK8sStack();
    const target = kafkaTarget();
    kafkaFromEnvironment = target.source === 'env';
    env = {
      ...(await startDistributedServers(target, servers)),
      ...productEnv(
        { prefix: 'dist', runId, jwtSecret: secret, ports: PORTS },
        {
          EXPIRY_CHECK_INTERVAL_MS: '500',
          // Decision 29 with bounds a test can wait for: a revoke waits 2 s for the log, a replica out of touch 5 s.
          EVENT_LOG_PUBLISH_DEADLINE_MS: '2000',
          FEED_STALENESS_BOUND_MS: '5000',
          FEED_RECOVERY_GRACE_MS: '3000',
        },
      ),
    };
    token = await signDevToken(secret, { org: ORG, scope: 'authorizations:write scores:write' });
    credentials = await startService('credentials', PORTS.credentials, env);
    scoreIngest = await startService('score-ingest', PORTS.scoreIngest, env);
    readApis.push(await startReadApi(PORTS.readApi1), await startReadApi(PORTS.readApi2));
  }, 180_000);

  /** The stack's services, its databases and its timings; KAFKA_BROKERS and MONGO_URL reach its servers. */
  async function startOnComposeStack(): Promise<void> {
    env = stackEnv(COMPOSE_DATABASES, COMPOSE_TEST_TIMINGS);
    if (!env.KAFKA_BROKERS || !env.MONGO_URL)
      throw new Error('on the Compose stack, KAFKA_BROKERS and MONGO_URL name its published servers');
    kafkaFromEnvironment = true;
    token = await signDevToken(process.env.JWT_HS256_SECRET ?? '', { org: ORG, scope: 'authorizations:write scores:write' });
    credentials = await composeService('credentials', PORTS.credentials);
    scoreIngest = await composeService('score-ingest', PORTS.scoreIngest);
    readApis.push(await startReadApi(PORTS.readApi1), await startReadApi(PORTS.readApi2));
  }

  /** The cluster's services, its databases and its timings; KAFKA_BROKERS and MONGO_URL reach its servers. */
  async function startOnK8sStack(): Promise<void> {
    env = stackEnv(K8S_DATABASES, K8S_TEST_TIMINGS);
    if (!env.KAFKA_BROKERS || !env.MONGO_URL) throw new Error('on the cluster, KAFKA_BROKERS and MONGO_URL name its NodePorts');
    kafkaFromEnvironment = true;
    token = await signDevToken(process.env.JWT_HS256_SECRET ?? '', { org: ORG, scope: 'authorizations:write scores:write' });
    credentials = await k8sService('credentials');
    scoreIngest = await k8sService('score-ingest');
    readApis.push(await startReadApi(PORTS.readApi1), await startReadApi(PORTS.readApi2));
  }

  afterAll(async () => {
    for (const service of [...readApis, scoreIngest, credentials]) {
      if (!service) continue;
      outputs.push(service.output());
      // The stack's services stay up: the stack is brought down by whoever brought it up.
      if (!onComposeStack && !onK8sStack) await service.stop();
    }
    if (env?.MONGO_URL) {
      const client = await MongoClient.connect(env.MONGO_URL);
      // On the stack, only what this test made: its services keep their databases.
      const databases = onComposeStack || onK8sStack ? [] : [env.CREDENTIALS_DB!, env.READ_VIEWS_DB!];
      for (const name of [...databases, `${env.READ_VIEWS_DB!}_rebuilt`]) await client.db(name).dropDatabase();
      await client.close();
    }
    for (const server of servers) await server.stop();
  }, 60_000);

  test('when an authorization is created and a score posted, then both replicas serve the score and the pillars', async () => {
    const credential = await createCredential();
    await postScore(64);
    for (const replica of readApis) {
      const score = await readUntil(replica, credential, (r) => r.status === 200);
      expect(score.body).toEqual({ clientId: credential.clientId, scoreDate: '2026-11-20', score: 64, grade: 'Strengthen' });
      const pillars = await read(replica, credential, 'pillars');
      expect(pillars.status).toBe(200);
      expect(pillars.body.pillarScores.deviceHealth).toBe(68);
    }
  });

  test('when a replica signs a score, then it verifies with the keys the other publishes, and its ETag gets a 304 from the other', async () => {
    const credential = await createCredential();
    await postScore(66, '2026-11-21');
    for (const replica of readApis) await readUntil(replica, credential, (r) => r.body.scoreDate === '2026-11-21');
    const [first, second] = readApis as [ServiceProcess, ServiceProcess];
    const requestPath = `/v1/customers/${credential.clientId}/score`;

    const signed = await fetch(`${first.url}${requestPath}`, { headers: { 'x-api-key': credential.apiKey } });
    const body = Buffer.from(await signed.arrayBuffer());
    const keysOfTheOther = await request<{ keys: PublishedKey[] }>(`${second.url}/.well-known/jwks.json`);
    const verification = verifyResponseSignature(
      { status: signed.status, headers: signed.headers, body, requestPath },
      keysOfTheOther.body.keys,
    );
    const conditional = await fetch(`${second.url}${requestPath}`, {
      headers: { 'x-api-key': credential.apiKey, 'if-none-match': signed.headers.get('etag')! },
    });

    expect(verification).toMatchObject({ valid: true, kid: (JSON.parse(SIGNING_KEYS) as { kid: string }[])[0]?.kid });
    expect(conditional.status).toBe(304);
  });

  test('when a key is rotated with a short overlap, then both replicas accept both keys, then only the new one once the overlap ends', async () => {
    const original = await createCredential();
    for (const replica of readApis) await readUntil(replica, original, (r) => r.status === 200);

    const answer = await request<Credential & { previousKeyExpiresAt: string }>(
      `${credentials.url}/v1/organizations/${ORG}/authorizations/${original.clientId}/rotate`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ overlapSeconds: 3 }),
      },
    );
    expect(answer.status).toBe(200);
    issuedKeys.push(answer.body.apiKey);
    const rotated = { clientId: original.clientId, apiKey: answer.body.apiKey };
    for (const replica of readApis) {
      await readUntil(replica, rotated, (r) => r.status === 200, 5_000, 100);
      expect((await read(replica, original)).status).toBe(200);
    }

    // Refused once the overlap has ended, and not before it: the first refusal came at most a second early (a slow
    // machine's room; an overlap cut short would show seconds early).
    const overlapEnds = Date.parse(answer.body.previousKeyExpiresAt);
    for (const replica of readApis) {
      const refused = await readUntil(replica, original, (r) => r.status !== 200, 10_000, 50);
      expect(Date.now()).toBeGreaterThanOrEqual(overlapEnds - 1_000);
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('INVALID_API_KEY');
      expect((await read(replica, rotated)).status).toBe(200);
    }
  });

  test('when a key is delivered by a one-time claim link, then it works on both replicas only once claimed, the link works once, a new link kills the old and a revoke kills the link', async () => {
    type Linked = { clientId: string; claim: { url: string } };
    const claimBody = { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{}' };
    const tokenOf = (url: string) => url.split('/').pop() ?? '';
    const createLinked = async () => {
      const linked = await orgAdmin.createAuthorization<Linked & Credential>(credentials.url, ORG, token, {
        recipientType: 'auditor',
        scopes: ['qr_score'],
        keyDelivery: 'claimLink',
      });
      issuedKeys.push(tokenOf(linked.claim.url));
      return linked;
    };
    const linked = await createLinked();
    const guessed = { clientId: linked.clientId, apiKey: generateApiKey('rsk') };
    for (const replica of readApis) await readUntil(replica, guessed, (r) => r.status === 401 && r.body.code === 'INVALID_API_KEY');

    const opened = [
      await request(linked.claim.url, { headers: { accept: 'application/json' } }),
      await request(linked.claim.url, { headers: { accept: 'application/json' } }),
    ];
    expect(opened.map((answer) => answer.status)).toEqual([200, 200]);
    const claimed = await request<Credential>(linked.claim.url, claimBody);
    expect(claimed.status).toBe(201);
    issuedKeys.push(claimed.body.apiKey);
    for (const replica of readApis) await readUntil(replica, claimed.body, (r) => r.status === 200, 5_000, 50);
    expect(await request(linked.claim.url, claimBody)).toMatchObject({ status: 410, body: { code: 'CLAIM_LINK_USED' } });

    const replaced = await createLinked();
    const reissued = await request<Linked>(`${credentials.url}/v1/organizations/${ORG}/authorizations/${replaced.clientId}/claim-link`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(reissued.status).toBe(200);
    issuedKeys.push(tokenOf(reissued.body.claim.url));
    expect(await request(replaced.claim.url, claimBody)).toMatchObject({ status: 404, body: { code: 'CLAIM_LINK_NOT_FOUND' } });

    const revoked = await createLinked();
    const revoke = await request(`${credentials.url}/v1/organizations/${ORG}/authorizations/${revoked.clientId}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(revoke.status).toBe(200);
    expect(await request(revoked.claim.url, claimBody)).toMatchObject({ status: 410, body: { code: 'CLAIM_LINK_EXPIRED' } });
  });

  test('when one credential reads through both replicas, then the credentials service lists every request within 10 s, whichever replica answered, and usage counts the successes', async () => {
    const credential = await createCredential(['qr_score']);
    const stranger = await createCredential(['qr_score']);
    for (const replica of readApis) await readUntil(replica, credential, (r) => r.status === 200);
    const answers = [];
    for (let n = 0; n < 10; n += 1) answers.push(await read(readApis[n % 2]!, credential, n % 5 === 4 ? 'pillars' : 'score'));
    answers.push(await read(readApis[1]!, { clientId: credential.clientId, apiKey: stranger.apiKey }));
    const sent = performance.now();
    const expected = new Map(
      answers.map((answer) => [answer.headers.get('x-request-id') ?? '', [answer.status, answer.body.code ?? null]]),
    );
    const accessLogUrl = `${credentials.url}/v1/organizations/${ORG}/authorizations/${credential.clientId}/access-log?limit=500`;

    type Entry = { requestId: string; status: number; code: string | null; resource: string; at: string };
    const items = await eventually(
      async () => {
        const page = await request<{ items: Entry[] }>(accessLogUrl, { headers: { authorization: `Bearer ${token}` } });
        return [...expected.keys()].every((id) => page.body.items.some((entry) => entry.requestId === id)) ? page.body.items : undefined;
      },
      10_000,
      100,
    );
    process.stderr.write(
      `[distributed] reads on both replicas were all listed ${(performance.now() - sent).toFixed(0)} ms after the last\n`,
    );

    for (const [requestId, [status, code]] of expected) {
      expect(items.filter((entry) => entry.requestId === requestId).map((entry) => [entry.status, entry.code])).toEqual([[status, code]]);
    }
    expect(items.filter((entry) => entry.code === 'INSUFFICIENT_SCOPE').map((entry) => entry.resource)).toEqual(['pillars', 'pillars']);
    const successes = items.filter((entry) => entry.status < 400);
    // The usage counts and the last use are two writes of one unordered bulkWrite: wait for the state asserted, not the first half of it.
    await retried(
      async () => {
        const answer = await request(`${credentials.url}/v1/organizations/${ORG}/authorizations/${credential.clientId}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(answer.body).toMatchObject({
          lastUsedAt: successes[0]!.at,
          usage: { last24h: successes.length, last30d: successes.length },
        });
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
  }, 60_000);

  test('when 200 requests with one key are spread over both replicas in one window, then exactly 120 are admitted', async () => {
    const credential = await createCredential();
    // One admitted read per replica once the credential is projected (CREDENTIAL_NOT_FOUND is not counted
    // against the credential): 198 more make 200 in all.
    const statuses: number[] = [];
    for (const replica of readApis) statuses.push((await readUntil(replica, credential, (r) => r.status === 200)).status);
    for (let batch = 0; batch < 198; batch += 18) {
      const answers = await Promise.all(
        Array.from({ length: Math.min(18, 198 - batch) }, (_, i) => read(readApis[(batch + i) % 2]!, credential)),
      );
      statuses.push(...answers.map((a) => a.status));
    }
    expect(statuses).toHaveLength(200);
    expect(statuses.filter((s) => s === 200)).toHaveLength(120);
    expect(statuses.filter((s) => s === 429)).toHaveLength(80);
  });

  test('when an authorization is revoked, then every replica refuses it within one second of the 200', async () => {
    const latencies: number[] = [];
    for (let trial = 0; trial < 5; trial += 1) {
      const credential = await createCredential();
      for (const replica of readApis) await readUntil(replica, credential, (r) => r.status === 200);
      const revoked = await request(`${credentials.url}/v1/organizations/${ORG}/authorizations/${credential.clientId}/revoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      const t0 = performance.now();
      expect(revoked.status).toBe(200);
      await Promise.all(readApis.map((replica) => readUntil(replica, credential, (r) => r.body.code === 'CREDENTIAL_INACTIVE', 5_000)));
      latencies.push(performance.now() - t0);
    }
    process.stderr.write(`[distributed] revocation enforced on both replicas after ${latencies.map((l) => l.toFixed(0)).join(', ')} ms\n`);
    expect(Math.max(...latencies)).toBeLessThanOrEqual(1000);
  });

  test('when a replica is killed and restarted, then it catches up with what happened while it was down', async () => {
    await readApis[1]!.stop('SIGKILL');
    outputs.push(readApis[1]!.output());
    const credential = await createCredential();
    await postScore(91, '2026-11-21');
    await readUntil(readApis[0]!, credential, (r) => r.status === 200 && r.body.score === 91);

    readApis[1] = await startReadApi(PORTS.readApi2);
    const caughtUp = await readUntil(readApis[1], credential, (r) => r.status === 200);
    expect(caughtUp.body.score).toBe(91);
  }, 90_000);

  test('when a replica stops and starts again, then its change feed reuses one consumer group and removes it at shutdown', async () => {
    const kafka = new Kafka({
      brokers: env.KAFKA_BROKERS!.split(','),
      clientId: `e2e-groups-${runId}`,
      logLevel: logLevel.NOTHING,
      ...kafkaSecurityFromEnvironment(),
    });
    const admin = kafka.admin();
    await admin.connect();
    const feedGroups = async () =>
      (await admin.listGroups()).groups.map((group) => group.groupId).filter((id) => id.startsWith('read-api-feed-'));
    // A replica's group is named after its host and port: in the stack, its container's hostname and 8080;
    // on the cluster, its pod's name and 8080 (a replacement pod has a name, and so a group, of its own).
    const hosts = new Map(
      onComposeStack
        ? [
            [PORTS.readApi1, await containerHostname('read-api-1')],
            [PORTS.readApi2, await containerHostname('read-api-2')],
          ]
        : [],
    );
    const ofReplica = (port: number) => {
      if (onK8sStack) return `read-api-feed-${k8sReplicas[port === PORTS.readApi1 ? 0 : 1]!.pod}-8080`;
      return onComposeStack ? `read-api-feed-${hosts.get(port)}-8080` : `read-api-feed-${hostname()}-${port}`;
    };
    try {
      const before = await feedGroups();
      expect(before).toEqual(expect.arrayContaining([ofReplica(PORTS.readApi1), ofReplica(PORTS.readApi2)]));

      const stopped = ofReplica(PORTS.readApi2);
      await readApis[1]!.stop('SIGTERM');
      outputs.push(readApis[1]!.output());
      expect(await feedGroups()).not.toContain(stopped);

      readApis[1] = await startReadApi(PORTS.readApi2);
      const after = await eventually(async () => {
        const groups = await feedGroups();
        return groups.includes(ofReplica(PORTS.readApi2)) ? groups : undefined;
      }, 30_000);
      expect(after).toContain(ofReplica(PORTS.readApi2));
      expect(after.length).toBe(before.length);
    } finally {
      await admin.disconnect();
    }
  }, 90_000);

  test('when a malformed event lands on a topic, then it is dead-lettered and the next good event is still projected', async () => {
    const kafka = new Kafka({
      brokers: env.KAFKA_BROKERS!.split(','),
      clientId: `e2e-${runId}`,
      logLevel: logLevel.NOTHING,
      ...kafkaSecurityFromEnvironment(),
    });
    const producer = kafka.producer();
    await producer.connect();
    const marker = `malformed-${runId}`;
    await producer.send({ topic: TOPICS.authorizations, messages: [{ key: marker, value: `{"not": "an event", "marker": "${marker}"}` }] });
    await producer.disconnect();

    const credential = await createCredential();
    await readUntil(readApis[0]!, credential, (r) => r.status === 200);

    const consumer = kafka.consumer({ groupId: `e2e-dlt-${runId}` });
    await consumer.connect();
    await consumer.subscribe({ topic: TOPICS.deadLetter, fromBeginning: true });
    const found = new Promise<string>((done) => {
      void consumer.run({
        eachMessage: ({ message }) => {
          const value = message.value?.toString() ?? '';
          if (value.includes(marker)) done(value);
          return Promise.resolve();
        },
      });
    });
    const letter = JSON.parse(await found) as { reason: string; topic: string };
    await consumer.disconnect();
    expect(letter.topic).toBe(TOPICS.authorizations);
    expect(letter.reason).toMatch(/not a valid event/);
  }, 60_000);

  test('when the views are rebuilt from offset zero, then they equal the live ones', async () => {
    const into = `${env.READ_VIEWS_DB!}_rebuilt`;
    // On the stack, the image's own script in a replica's container (its configuration, its network).
    const stdout = onK8sStack
      ? await execInReadApi('env', 'LOG_LEVEL=warn', 'node', 'services/read-api/dist/rebuild-views/main.js', '--into', into)
      : onComposeStack
        ? await compose(
            'exec',
            '-T',
            '-e',
            'LOG_LEVEL=warn',
            'read-api-1',
            'node',
            'services/read-api/dist/rebuild-views/main.js',
            '--into',
            into,
          )
        : (
            await run(process.execPath, [`${REPO_ROOT}/services/read-api/dist/rebuild-views/main.js`, '--into', into], {
              env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
            })
          ).stdout;
    expect(JSON.parse(stdout.trim().split('\n').pop()!).rebuiltInto).toBe(into);

    const client = await MongoClient.connect(env.MONGO_URL!);
    try {
      const live = await snapshotViews(client.db(env.READ_VIEWS_DB), READ_VIEWS);
      const rebuilt = await snapshotViews(client.db(into), READ_VIEWS);
      expect(live[credentialView.name]?.length).toBeGreaterThan(0);
      expect(rebuilt).toEqual(live);
    } finally {
      await client.close();
    }
  }, 90_000);

  test('when Kafka is down, then a create still succeeds, a revoke is 202 pending, both replicas refuse with 503 within the bound, and once Kafka is back the revocation is enforced everywhere', async () => {
    if (!kafkaFromEnvironment) {
      process.stderr.write('[distributed] Kafka outage step needs scripts/infra.sh (KAFKA_BROKERS); Testcontainers Kafka is not stopped\n');
      return;
    }
    const revokedDuringOutage = await createCredential();
    // On the cluster, a pod that refuses fails its readiness and leaves the Service, as it should: each
    // replica is read at its own pod's address, which the pod keeps while it is out of the Service.
    const replicas: ServiceProcess[] = onK8sStack ? k8sReplicas.map((replica) => ({ ...replica, url: replica.podUrl! })) : readApis;
    for (const replica of replicas) await readUntil(replica, revokedDuringOutage, (r) => r.status === 200);
    const bound = Number(env.FEED_STALENESS_BOUND_MS);

    if (onK8sStack) await pauseKafka();
    else if (onComposeStack) await compose('stop', 'kafka');
    else await run('bash', [`${REPO_ROOT}/scripts/infra.sh`, 'stop', 'kafka']);
    const outageStarted = performance.now();
    let createdDuringOutage: Credential;
    try {
      createdDuringOutage = await createCredential();
      const revoke = await request(`${credentials.url}/v1/organizations/${ORG}/authorizations/${revokedDuringOutage.clientId}/revoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(revoke.status).toBe(202);
      expect(revoke.body).toMatchObject({ status: 'revoked', enforcement: 'pending' });

      const refusedAfter = await Promise.all(
        replicas.map(async (replica) => {
          // Polled gently: the reads answered 200 count against the credential's 120 a minute.
          const refused = await readUntil(replica, revokedDuringOutage, (r) => r.status !== 200, bound + 10_000, 250);
          expect(refused.status).toBe(503);
          expect(refused.body.code).toBe('SERVICE_UNAVAILABLE');
          expect((await request(`${replica.url}/readyz`)).status).toBe(503);
          return performance.now() - outageStarted;
        }),
      );
      process.stderr.write(
        `[distributed] replicas out of touch with Kafka refused after ${refusedAfter.map((ms) => ms.toFixed(0)).join(', ')} ms\n`,
      );
      // Within the bound, plus the probe's second and the time the outage took to be noticed.
      expect(Math.max(...refusedAfter)).toBeLessThanOrEqual(bound + 3_000);
    } finally {
      if (onK8sStack) await resumeKafka();
      else if (onComposeStack) await compose('up', '--detach', '--wait', '--no-deps', 'kafka');
      else await run('bash', [`${REPO_ROOT}/scripts/infra.sh`, 'up', 'kafka'], { timeout: 120_000 });
    }
    const kafkaBack = performance.now();
    const enforcedAfter = await Promise.all(
      replicas.map(async (replica) => {
        const refused = await readUntil(replica, revokedDuringOutage, (r) => r.status !== 503, 60_000, 250);
        // The first answer after the outage already knows of the revocation: it is never served again.
        expect(refused.status).toBe(401);
        expect(refused.body.code).toBe('CREDENTIAL_INACTIVE');
        await eventually(async () => ((await request(`${replica.url}/readyz`)).status === 200 ? true : undefined), 30_000);
        return performance.now() - kafkaBack;
      }),
    );
    process.stderr.write(
      `[distributed] after Kafka came back both replicas enforced the revocation after ${enforcedAfter.map((ms) => ms.toFixed(0)).join(', ')} ms\n`,
    );
    const answer = await readUntil(replicas[0]!, createdDuringOutage!, (r) => r.status === 200, 60_000);
    expect(answer.body.clientId).toBe(createdDuringOutage!.clientId);
  }, 240_000);

  test('when the run is over, then no raw API key or claim-link token is in any log, Kafka topic (the access log included) or MongoDB collection', async () => {
    const haystacks = [...outputs, ...[...readApis, scoreIngest, credentials].map((s) => s.output())];

    const { topics, values } = await everyTopicRecord(env.KAFKA_BROKERS!, `e2e-leak-${runId}`);
    // Searched one record at a time: a broker that served earlier runs (benchmarks) may hold more than one string can.
    for (const value of values) haystacks.push(value);
    const { collections: searchedCollections, documents } = await everyCollection(env.MONGO_URL!, [
      env.CREDENTIALS_DB!,
      env.READ_VIEWS_DB!,
    ]);
    haystacks.push(...documents);

    expect(issuedKeys.length).toBeGreaterThanOrEqual(8);
    expect(values.some((v) => v.includes('keyDigest'))).toBe(true);
    // The access-log topic and its collections were searched too (decision 21).
    expect(topics).toContain(ACCESS_LOG_TOPIC);
    expect(values.some((v) => v.includes('"records":[{'))).toBe(true);
    expect(searchedCollections).toEqual(expect.arrayContaining(['access_log', 'access_usage']));
    expect(issuedKeys.filter((key) => haystacks.some((haystack) => haystack.includes(key)))).toEqual([]);
  }, 120_000);
});
