import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { ACCESS_LOG_TOPIC, MAX_SCORES_PER_BATCH, TOPICS } from '@rsd/contracts';
import { signDevToken } from '@rsd/platform';
import { ROOT } from './processes';
import { cpuMsOf, machine } from './scale/proc-stats';
import { distributedServiceSpecs, distributedSecrets } from './service-process';
import { startService, type ServiceProcess } from './soak/services';
import { forEachLimited, requestJson } from './webhooks-load/http';

// `npm run bench:capacity`: the counts docs/capacity.md's model is made of, on the distributed
// runtime (credentials, score ingest and one read-API replica started as `npm run bench` starts them,
// on the Kafka, MongoDB-wire server and Redis of KAFKA_BROKERS, MONGO_URL and REDIS_URL). Counts, not
// timings: Redis commands (INFO commandstats), MongoDB-wire commands (FerretDB's serverStatus
// metrics.commands; MongoDB's opcounters), Kafka records and bytes (topic end offsets, and the records
// themselves read back) per read of /score and per ingested score. Those counters are the servers'
// own, shared with anything else using them: the background rate over idle windows before and after
// is subtracted. One short autocannon burst at the end gives an indicative CPU time per read; the
// authoritative figure is `npm run bench`'s read-path table.

const SECRET = randomBytes(32).toString('base64url');
const RUN = randomUUID().slice(0, 8);
const PORTS = { readApis: [18380], credentials: 18381, scoreIngest: 18382 };
const ONE_CREDENTIAL_READS = Number(process.env.CAPACITY_READS ?? 2_000);
const SPREAD_ORGANIZATIONS = Number(process.env.CAPACITY_ORGANIZATIONS ?? 40);
const CREDENTIALS_PER_ORGANIZATION = 10;
const INGEST_BATCHES = 2;
const SINGLE_SCORES = 100;
const IDLE_WINDOW_MS = 5_000;
/** Long enough for the access log's flush (1 s) and the credentials service's projection of it. */
const SETTLE_MS = 4_000;
const BURST_S = 5;

const progress = (line: string) => process.stderr.write(`[capacity] ${line}\n`);

interface Snapshot {
  at: number;
  redis: Map<string, number>;
  mongo: Map<string, number>;
  /** `topic:partition` → end offset. */
  offsets: Map<string, bigint>;
}

type Delta = Map<string, number>;

const TOPICS_COUNTED = [ACCESS_LOG_TOPIC, TOPICS.scores, TOPICS.authorizations];

class Counters {
  constructor(
    private readonly redis: Redis,
    private readonly mongo: MongoClient,
    private readonly admin: Admin,
  ) {}

  /** Redis commands by name (cmdstat_<name> calls), MongoDB-wire commands by name, Kafka end offsets. */
  async snapshot(): Promise<Snapshot> {
    const redis = new Map<string, number>();
    for (const match of (await this.redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      redis.set(match[1]!, Number(match[2]));
    }
    const status = (await this.mongo.db('admin').command({ serverStatus: 1 })) as {
      opcounters?: Record<string, number>;
      metrics?: { commands?: Record<string, { total?: number }> };
    };
    const mongo = new Map<string, number>();
    // FerretDB 1.24 counts per command in metrics.commands; MongoDB has opcounters too.
    for (const [name, counts] of Object.entries(status.metrics?.commands ?? {})) mongo.set(name, Number(counts.total ?? 0));
    for (const [name, count] of Object.entries(status.opcounters ?? {})) mongo.set(`op:${name}`, Number(count));
    const offsets = new Map<string, bigint>();
    for (const topic of TOPICS_COUNTED) {
      for (const { partition, offset } of await this.admin.fetchTopicOffsets(topic)) offsets.set(`${topic}:${partition}`, BigInt(offset));
    }
    return { at: Date.now(), redis, mongo, offsets };
  }
}

function difference(before: Map<string, number>, after: Map<string, number>): Delta {
  const delta = new Map<string, number>();
  for (const [name, value] of after) {
    const change = value - (before.get(name) ?? 0);
    if (change !== 0) delta.set(name, change);
  }
  return delta;
}

/** The background: what the servers counted per ms while nothing of this script's ran (its own services idle included). */
interface Background {
  redisPerMs: Delta;
  mongoPerMs: Delta;
}

function backgroundOf(windows: [Snapshot, Snapshot][]): Background {
  const perMs = (pick: (s: Snapshot) => Map<string, number>) => {
    const sum = new Map<string, number>();
    let ms = 0;
    for (const [a, b] of windows) {
      ms += b.at - a.at;
      for (const [name, value] of difference(pick(a), pick(b))) sum.set(name, (sum.get(name) ?? 0) + value);
    }
    return new Map([...sum].map(([name, value]) => [name, value / ms]));
  };
  return { redisPerMs: perMs((s) => s.redis), mongoPerMs: perMs((s) => s.mongo) };
}

/** A window's counts less the background over its length. */
function net(before: Snapshot, after: Snapshot, background: Background): { redis: Delta; mongo: Delta } {
  const less = (delta: Delta, perMs: Delta) => {
    const out = new Map<string, number>();
    for (const name of new Set([...delta.keys(), ...perMs.keys()])) {
      out.set(name, (delta.get(name) ?? 0) - (perMs.get(name) ?? 0) * (after.at - before.at));
    }
    return out;
  };
  return {
    redis: less(difference(before.redis, after.redis), background.redisPerMs),
    mongo: less(difference(before.mongo, after.mongo), background.mongoPerMs),
  };
}

const sumOf = (delta: Delta, names?: readonly string[]) =>
  [...delta].filter(([name]) => (names ? names.includes(name) : !name.startsWith('op:'))).reduce((sum, [, value]) => sum + value, 0);

const MONGO_READS = ['find', 'aggregate', 'count', 'distinct', 'getMore'];
const MONGO_WRITES = ['insert', 'update', 'delete', 'findAndModify'];

interface KafkaMessage {
  partition: number;
  keyBytes: number;
  valueBytes: number;
  headerBytes: number;
  value: string;
}

/** The records appended to `topic` between two snapshots, read back with a consumer group of their own (removed after). */
async function recordsBetween(kafka: Kafka, admin: Admin, topic: string, before: Snapshot, after: Snapshot): Promise<KafkaMessage[]> {
  const ranges = [...after.offsets]
    .filter(([key]) => key.startsWith(`${topic}:`))
    .map(([key, end]) => ({ partition: Number(key.slice(topic.length + 1)), from: before.offsets.get(key) ?? 0n, end }))
    .filter(({ from, end }) => end > from);
  if (ranges.length === 0) return [];
  const groupId = `capacity-inputs-${RUN}-${randomUUID().slice(0, 8)}`;
  const consumer = kafka.consumer({ groupId });
  const messages: KafkaMessage[] = [];
  const remaining = new Map(ranges.map(({ partition, from, end }) => [partition, end - from]));
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: false });
    let done!: () => void;
    const all = new Promise<void>((resolve) => (done = resolve));
    await consumer.run({
      autoCommit: false,
      eachMessage: ({ partition, message }) => {
        const range = ranges.find((r) => r.partition === partition);
        const offset = BigInt(message.offset);
        if (!range || offset < range.from || offset >= range.end) return Promise.resolve();
        const headers = Object.entries(message.headers ?? {}).reduce(
          (sum, [name, value]) =>
            sum + Buffer.byteLength(name) + (Buffer.isBuffer(value) ? value.length : Buffer.byteLength(String(value ?? ''))),
          0,
        );
        messages.push({
          partition,
          keyBytes: message.key?.length ?? 0,
          valueBytes: message.value?.length ?? 0,
          headerBytes: headers,
          value: message.value?.toString() ?? '',
        });
        const left = (remaining.get(partition) ?? 0n) - 1n;
        remaining.set(partition, left);
        if ([...remaining.values()].every((n) => n <= 0n)) done();
        return Promise.resolve();
      },
    });
    for (const { partition, from } of ranges) consumer.seek({ topic, partition, offset: String(from) });
    const gaveUp = new AbortController();
    const waited = await Promise.race([all.then(() => true), sleep(30_000, false, { signal: gaveUp.signal }).catch(() => false)]);
    gaveUp.abort();
    if (!waited) progress(`reading ${topic} back timed out; counted what arrived`);
  } finally {
    await consumer.disconnect();
    await admin.deleteGroups([groupId]).catch(() => undefined);
  }
  return messages;
}

interface Credential {
  clientId: string;
  apiKey: string;
  organizationId: string;
}

async function token(claims: { org?: string; scope: string }): Promise<string> {
  return signDevToken(SECRET, claims);
}

async function createCredential(credentialsUrl: string, organizationId: string): Promise<Credential> {
  const answer = await requestJson<{ clientId: string; apiKey: string }>(
    `${credentialsUrl}/v1/organizations/${organizationId}/authorizations`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${await token({ org: organizationId, scope: 'authorizations:write' })}` },
      body: JSON.stringify({ recipientType: 'insurance_provider', scopes: ['qr_score', 'pillar_breakdown'] }),
    },
  );
  if (answer.status !== 201) throw new Error(`create failed: ${answer.status}`);
  return { ...answer.body, organizationId };
}

const scoreOf = (organizationId: string, i: number) => ({
  organizationId,
  scoreDate: new Date().toISOString().slice(0, 10),
  score: 40 + (i % 50),
  grade: 'Strengthen',
  pillarScores: { structuralIntegrity: 70, failureResistance: 75, deviceHealth: 68, recoveryCapability: 77 },
});

/** One token without an `org` claim posts for every organization (decision 34). */
async function postScores(scoreIngestUrl: string, scores: unknown[]): Promise<void> {
  const answer = await requestJson(`${scoreIngestUrl}/v1/scores`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await token({ scope: 'scores:write' })}` },
    body: JSON.stringify(scores.length === 1 ? scores[0] : { scores }),
  });
  if (answer.status !== 202) throw new Error(`score ingest answered ${answer.status}`);
}

async function readScore(readApiUrl: string, credential: Credential): Promise<number> {
  const response = await fetch(`${readApiUrl}/v1/customers/${credential.clientId}/score`, { headers: { 'x-api-key': credential.apiKey } });
  await response.arrayBuffer();
  return response.status;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

interface Row {
  input: string;
  value: string;
  how: string;
}

const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '–');

/** What one phase of reads cost, per read. */
function readRows(
  label: string,
  reads: number,
  counts: { redis: Delta; mongo: Delta },
  accessMessages: KafkaMessage[],
  ours: Set<string>,
): Row[] {
  let records = 0;
  let recordsInOurMessages = 0;
  let bytes = 0;
  let valueBytes = 0;
  for (const message of accessMessages) {
    const batch = JSON.parse(message.value) as { records?: { clientId?: string }[] };
    const mine = (batch.records ?? []).filter((record) => ours.has(record.clientId ?? '')).length;
    if (mine === 0) continue;
    records += mine;
    recordsInOurMessages += batch.records?.length ?? 0;
    bytes += message.keyBytes + message.valueBytes + message.headerBytes;
    valueBytes += message.valueBytes;
  }
  const ourMessages = accessMessages.filter((m) =>
    ours.has(((JSON.parse(m.value) as { records?: { clientId?: string }[] }).records ?? [])[0]?.clientId ?? ''),
  ).length;
  const per = (n: number) => n / reads;
  const redisByName = [...counts.redis]
    .filter(([, n]) => Math.abs(per(n)) >= 0.01)
    .map(([name, n]) => `${name} ${fixed(per(n))}`)
    .join(', ');
  const mongoByName = [...counts.mongo]
    .filter(([name, n]) => !name.startsWith('op:') && Math.abs(per(n)) >= 0.005)
    .map(([name, n]) => `${name} ${fixed(per(n), 3)}`)
    .join(', ');
  return [
    { input: `${label}: reads`, value: `${reads}`, how: 'HTTP 200s counted by this script' },
    {
      input: `${label}: Redis commands per read`,
      value: fixed(per(sumOf(counts.redis))),
      how: `INFO commandstats, net of background (${redisByName || 'none'}; a script's own commands count too)`,
    },
    {
      input: `${label}: Redis calls per read (EVALSHA)`,
      value: fixed(per(sumOf(counts.redis, ['evalsha', 'eval']))),
      how: 'the rate-limit script: one request and reply each; ioredis pipelines those of one event-loop turn into one write',
    },
    {
      input: `${label}: MongoDB-wire reads per read (all services)`,
      value: fixed(per(sumOf(counts.mongo, MONGO_READS)), 3),
      how: `serverStatus metrics.commands find+aggregate+count, net of background (every command per read: ${mongoByName || 'none'})`,
    },
    {
      input: `${label}: MongoDB-wire writes per read (all services)`,
      value: fixed(per(sumOf(counts.mongo, MONGO_WRITES)), 3),
      how: 'insert+update+delete commands',
    },
    {
      input: `${label}: access records per read`,
      value: fixed(per(records)),
      how: `${ACCESS_LOG_TOPIC} read back, records with this run's Client IDs`,
    },
    {
      input: `${label}: Kafka access-log messages per read`,
      value: fixed(per(ourMessages), 4),
      how: `${ourMessages} messages, ${fixed(records / Math.max(1, ourMessages), 0)} of this run's records each (${recordsInOurMessages} in all)`,
    },
    {
      input: `${label}: access-log bytes per read`,
      value: fixed(recordsInOurMessages > 0 ? bytes / recordsInOurMessages : NaN, 1),
      how: `key + value + headers of the messages / their records (value alone ${fixed(recordsInOurMessages > 0 ? valueBytes / recordsInOurMessages : NaN, 1)})`,
    },
  ];
}

function gitCommit(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${commit} with uncommitted changes` : commit;
  } catch {
    return 'unknown commit';
  }
}

async function main(): Promise<void> {
  const { KAFKA_BROKERS, MONGO_URL, REDIS_URL } = process.env;
  if (!KAFKA_BROKERS || !MONGO_URL || !REDIS_URL) {
    throw new Error('set KAFKA_BROKERS, MONGO_URL and REDIS_URL (eval "$(scripts/infra.sh up)")');
  }
  const startedAt = new Date();
  const credentialsDb = `capacity_credentials_${RUN}`;
  const viewsDb = `capacity_views_${RUN}`;
  const common = {
    RUNTIME: 'distributed',
    JWT_HS256_SECRET: SECRET,
    LOG_LEVEL: 'info',
    // As `npm run bench`: the per-credential limit would stop the load; everything else is as shipped.
    RATE_LIMIT_PER_MINUTE: '1000000000',
    FAILED_AUTH_LIMIT_PER_MINUTE: '1000000000',
    CREDENTIALS_DB: credentialsDb,
    READ_VIEWS_DB: viewsDb,
    ...distributedSecrets(),
  };
  const specs = distributedServiceSpecs(PORTS, common, (letter) => ({ REPLICA_ID: `capacity-${RUN}-${letter}` }));

  const redis = new Redis(REDIS_URL, { lazyConnect: false });
  const mongo = await MongoClient.connect(MONGO_URL, { appName: 'capacity-inputs' });
  const kafka = new Kafka({ clientId: 'capacity-inputs', brokers: KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const counters = new Counters(redis, mongo, admin);
  const logDir = await mkdtemp(join(tmpdir(), 'rsd-capacity-'));
  const services: ServiceProcess[] = [];
  const rows: Row[] = [];
  let succeeded = false;
  try {
    for (const spec of specs) {
      services.push(await startService(spec, logDir));
      progress(`${spec.name} ready on :${spec.port}`);
    }
    const [credentialsService, scoreIngest, readApi] = services as [ServiceProcess, ServiceProcess, ServiceProcess];
    const views = mongo.db(viewsDb);
    const documents = (collection: string) => views.collection(collection).countDocuments();

    // Phase 1: one credential, its views cached after the first read.
    const org = `capacity-${RUN}-one`;
    const one = await createCredential(credentialsService.url, org);
    await postScores(scoreIngest.url, [scoreOf(org, 0)]);
    await until(async () => (await readScore(readApi.url, one)) === 200, 'the first credential readable');

    progress(`idle window (${IDLE_WINDOW_MS / 1000} s) for the servers' background counts`);
    await sleep(SETTLE_MS);
    const idle1 = [await counters.snapshot()] as Snapshot[];
    await sleep(IDLE_WINDOW_MS);
    idle1.push(await counters.snapshot());

    progress(`${ONE_CREDENTIAL_READS} reads of /score, one credential, 4 at a time`);
    const a0 = await counters.snapshot();
    let failures = 0;
    await forEachLimited(ONE_CREDENTIAL_READS, 4, async () => {
      if ((await readScore(readApi.url, one)) !== 200) failures += 1;
    });
    await sleep(SETTLE_MS);
    const a1 = await counters.snapshot();

    // Phase 2: many credentials over many organizations, each read once (every view a cache miss), then once more (hits).
    progress(`${SPREAD_ORGANIZATIONS * CREDENTIALS_PER_ORGANIZATION} credentials over ${SPREAD_ORGANIZATIONS} organizations`);
    const organizations = Array.from({ length: SPREAD_ORGANIZATIONS }, (_, i) => `capacity-${RUN}-org${i}`);
    const spread: Credential[] = [];
    await forEachLimited(organizations.length * CREDENTIALS_PER_ORGANIZATION, 8, async (i) => {
      spread.push(await createCredential(credentialsService.url, organizations[i % organizations.length]!));
    });
    await postScores(
      scoreIngest.url,
      organizations.map((organizationId, i) => scoreOf(organizationId, i)),
    );
    await until(
      async () =>
        (await documents('credential_views')) >= spread.length + 1 && (await documents('score_history')) >= organizations.length + 1,
      'the spread credentials and scores projected',
    );
    await sleep(SETTLE_MS);
    // What a view document weighs: the cache holds its state, MongoDB the whole document.
    for (const collection of ['credential_views', 'score_history']) {
      const sample = await views.collection(collection).find({}).limit(100).toArray();
      const json = sample.reduce((sum, document) => sum + Buffer.byteLength(JSON.stringify(document)), 0) / Math.max(1, sample.length);
      const state =
        sample.reduce((sum, document) => sum + Buffer.byteLength(JSON.stringify(document.state)), 0) / Math.max(1, sample.length);
      rows.push({
        input: `${collection} document, bytes`,
        value: fixed(json, 0),
        how: `JSON of ${sample.length} stored documents, mean (the state alone ${fixed(state, 0)})`,
      });
    }
    const idle2a = await counters.snapshot();
    await sleep(IDLE_WINDOW_MS);
    const idle2b = await counters.snapshot();
    const background = backgroundOf([
      [idle1[0]!, idle1[1]!],
      [idle2a, idle2b],
    ]);

    progress(`${spread.length} reads, each credential once (cache misses)`);
    const b0 = await counters.snapshot();
    await forEachLimited(spread.length, 4, async (i) => {
      if ((await readScore(readApi.url, spread[i]!)) !== 200) failures += 1;
    });
    await sleep(SETTLE_MS);
    const b1 = await counters.snapshot();
    progress(`${spread.length} reads, each credential once more (cached)`);
    await forEachLimited(spread.length, 4, async (i) => {
      if ((await readScore(readApi.url, spread[i]!)) !== 200) failures += 1;
    });
    await sleep(SETTLE_MS);
    const b2 = await counters.snapshot();
    if (failures > 0) throw new Error(`${failures} reads did not answer 200`);

    // Phase 3: ingest, in batches of 1,000 for as many organizations, then single scores.
    const ingestOrganizations = Array.from({ length: INGEST_BATCHES * MAX_SCORES_PER_BATCH }, (_, i) => `capacity-${RUN}-ingest${i}`);
    const historyBefore = await documents('score_history');
    progress(`${ingestOrganizations.length} scores in batches of ${MAX_SCORES_PER_BATCH}`);
    const c0 = await counters.snapshot();
    for (let at = 0; at < ingestOrganizations.length; at += MAX_SCORES_PER_BATCH) {
      await postScores(
        scoreIngest.url,
        ingestOrganizations.slice(at, at + MAX_SCORES_PER_BATCH).map((o, i) => scoreOf(o, at + i)),
      );
    }
    await until(async () => (await documents('score_history')) >= historyBefore + ingestOrganizations.length, 'the batches projected');
    await sleep(SETTLE_MS);
    const c1 = await counters.snapshot();
    progress(`${SINGLE_SCORES} single scores`);
    for (let i = 0; i < SINGLE_SCORES; i += 1) await postScores(scoreIngest.url, [scoreOf(`capacity-${RUN}-single${i}`, i)]);
    await until(
      async () => (await documents('score_history')) >= historyBefore + ingestOrganizations.length + SINGLE_SCORES,
      'the single scores projected',
    );
    await sleep(SETTLE_MS);
    const c2 = await counters.snapshot();

    // Phase 4, last: one short burst for the server's CPU per read (indicative) and the counts under load.
    progress(`autocannon: 2 s warm-up, then ${BURST_S} s at 32 connections`);
    const url = `${readApi.url}/v1/customers/${one.clientId}/score`;
    await autocannon({ url, headers: { 'x-api-key': one.apiKey }, connections: 32, duration: 2 });
    const cpuBefore = await cpuMsOf(readApi.pid);
    const d0 = await counters.snapshot();
    const burst = await autocannon({ url, headers: { 'x-api-key': one.apiKey }, connections: 32, duration: BURST_S });
    const cpuAfter = await cpuMsOf(readApi.pid);
    await sleep(SETTLE_MS);
    const d1 = await counters.snapshot();
    const burstReads = burst.requests.total;

    // Read back what the phases appended.
    const oneSet = new Set([one.clientId]);
    const spreadSet = new Set(spread.map((c) => c.clientId));
    rows.push(
      ...readRows(
        'one credential (views cached)',
        ONE_CREDENTIAL_READS,
        net(a0, a1, background),
        await recordsBetween(kafka, admin, ACCESS_LOG_TOPIC, a0, a1),
        oneSet,
      ),
      ...readRows(
        `${spread.length} credentials, ${SPREAD_ORGANIZATIONS} organizations, first read each (cache misses)`,
        spread.length,
        net(b0, b1, background),
        await recordsBetween(kafka, admin, ACCESS_LOG_TOPIC, b0, b1),
        spreadSet,
      ),
      ...readRows(
        'the same credentials read again (cached)',
        spread.length,
        net(b1, b2, background),
        await recordsBetween(kafka, admin, ACCESS_LOG_TOPIC, b1, b2),
        spreadSet,
      ),
      {
        // The second pass differs from the first only in the read API's cache: the credentials service's share is in both.
        input: "the read API's own MongoDB-wire reads per read on a cache miss",
        value: fixed(
          (sumOf(net(b0, b1, background).mongo, MONGO_READS) - sumOf(net(b1, b2, background).mongo, MONGO_READS)) / spread.length,
          3,
        ),
        how: `first pass less second pass: one credential view per read plus one current score per organization (${SPREAD_ORGANIZATIONS}/${spread.length})`,
      },
      ...readRows(
        `one credential under load (32 connections, ${BURST_S} s)`,
        burstReads,
        net(d0, d1, background),
        await recordsBetween(kafka, admin, ACCESS_LOG_TOPIC, d0, d1),
        oneSet,
      ),
      {
        input: 'server CPU per read, read-API replica (indicative)',
        value: fixed(((cpuAfter - cpuBefore) * 1000) / burstReads, 1),
        how: `µs: /proc/<pid>/stat utime+stime over ${burstReads} reads (${fixed(burst.requests.average, 0)} req/s, p99 ${burst.latency.p99} ms, non-2xx ${burst.non2xx}); the authoritative figure is npm run bench's`,
      },
    );

    const ingestRows = async (label: string, scores: number, from: Snapshot, to: Snapshot, prefix: string) => {
      const counts = net(from, to, background);
      const messages = (await recordsBetween(kafka, admin, TOPICS.scores, from, to)).filter((m) => m.value.includes(prefix));
      const bytes = messages.reduce((sum, m) => sum + m.keyBytes + m.valueBytes + m.headerBytes, 0);
      const mongoByName = [...counts.mongo]
        .filter(([name, n]) => !name.startsWith('op:') && Math.abs(n / scores) >= 0.005)
        .map(([name, n]) => `${name} ${fixed(n / scores, 3)}`)
        .join(', ');
      const authorizationRecords = [...to.offsets]
        .filter(([key]) => key.startsWith(`${TOPICS.authorizations}:`))
        .reduce((sum, [key, end]) => sum + Number(end - (from.offsets.get(key) ?? 0n)), 0);
      return [
        { input: `${label}: scores`, value: `${scores}`, how: '202s counted by this script' },
        {
          input: `${label}: Kafka records per score (${TOPICS.scores})`,
          value: fixed(messages.length / scores),
          how: "records read back with this run's organizations",
        },
        {
          input: `${label}: Kafka bytes per score`,
          value: fixed(bytes / Math.max(1, messages.length), 0),
          how: 'key + value + headers (the CloudEvent)',
        },
        {
          input: `${label}: Kafka records on ${TOPICS.authorizations}`,
          value: `${authorizationRecords}`,
          how: 'end offsets (any producer)',
        },
        {
          input: `${label}: MongoDB-wire writes per score (all services)`,
          value: fixed(sumOf(counts.mongo, MONGO_WRITES) / scores, 3),
          how: `net of background (${mongoByName || 'none'})`,
        },
        {
          input: `${label}: MongoDB-wire reads per score (all services)`,
          value: fixed(sumOf(counts.mongo, MONGO_READS) / scores, 3),
          how: 'find+aggregate+count',
        },
        {
          input: `${label}: Redis commands per score`,
          value: fixed(sumOf(counts.redis) / scores, 3),
          how: 'INFO commandstats, net of background',
        },
      ];
    };
    rows.push(
      ...(await ingestRows(`ingest, batches of ${MAX_SCORES_PER_BATCH}`, ingestOrganizations.length, c0, c1, `capacity-${RUN}-ingest`)),
    );
    rows.push(...(await ingestRows('ingest, one score per request', SINGLE_SCORES, c1, c2, `capacity-${RUN}-single`)));
    rows.push({
      input: 'background during the idle windows',
      value: `${fixed(sumOf(background.redisPerMs) * 1000, 1)} Redis, ${fixed(sumOf(background.mongoPerMs) * 1000, 1)} MongoDB-wire commands/s`,
      how: `subtracted from every window above (${IDLE_WINDOW_MS / 1000} s before and after the credentials were created)`,
    });

    const heading =
      `Capacity inputs (npm run bench:capacity), ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${gitCommit()}, ` +
      `node ${process.version}, ${await machine()}; distributed runtime: one read-API replica, credentials, score ingest`;
    const table = [
      heading,
      '',
      '| input | value | how |',
      '|---|---:|---|',
      ...rows.map((row) => `| ${row.input} | ${row.value} | ${row.how} |`),
      '',
    ].join('\n');
    process.stdout.write(`\n${table}\n`);
    await mkdir(join(ROOT, 'bench/results'), { recursive: true });
    await writeFile(join(ROOT, 'bench/results/capacity-inputs.md'), table);
    succeeded = true;
  } finally {
    for (const service of services.reverse()) await service.stop();
    // The services' consumer groups and databases are this run's; the events stay in the topics (they are the event store).
    await admin.deleteGroups([`read-api-projections.${viewsDb}`, `credentials-access-log.${credentialsDb}`]).catch(() => undefined);
    for (const db of [credentialsDb, viewsDb])
      await mongo
        .db(db)
        .dropDatabase()
        .catch(() => undefined);
    await admin.disconnect();
    await mongo.close();
    redis.disconnect();
    // The services' logs are kept when the run failed: they say why.
    if (succeeded) await rm(logDir, { recursive: true, force: true });
    else progress(`the services' logs: ${logDir}`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:capacity failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
