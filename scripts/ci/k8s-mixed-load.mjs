// The mixed load of scripts/ci/k8s.sh (decision 52): every service under load while one pod of each
// is deleted in turn and then all five are rolled; afterwards, what was acknowledged is checked
// against the views, the webhook receiver's record and the event log, and a table per step is printed.
//
//   node scripts/ci/k8s-mixed-load.mjs OUT_DIR
//
// The environment names everything (k8s.sh sets it):
//   READ_URL CRED_URL INGEST_URL NOTIFIER_URL CONSOLE_URL   the Services' NodePorts on 127.0.0.1
//   RECEIVER_URL      the receiver's record from the host (NodePort); RECEIVER_TARGET the base of
//                     the webhooks' URLs inside the cluster (k8s-receiver.yaml)
//   ORG, TOKEN        an organization of the run's own and a bearer token that administers it
//   POOL              the read pool (k8s-load.mjs's CREDENTIALS_JSON, of another organization)
//   STEPS             the file k8s.sh appends each step to: {"name","kind":"delete"|"roll","at"} per line
//   KUBECTL           the cluster's kubectl (KUBECONFIG from the environment): the pods' deletions
//   KAFKA_BROKERS, KAFKA_SSL*, KAFKA_SASL_*   the event log from the host (engine-secrets.sh k8s-env)
//   REVOKE_BOUND_MS   decision 29: a revoke answered 200 is enforced by every replica within this
//   PENDING_BOUND_MS  and one answered 202 (enforcement pending) within this, once published
//
// The load, from the end of the setup until SIGTERM:
//   reads       GET score with the pool's credentials, READ_RATE a second (default 20)
//   console     GET /.well-known/jwks.json on the console, 2 a second (its API clients' read)
//   ingest      one score at a time for ORG, each a day after the last: every one is the new
//               latest, so each reaches every watcher's webhook (score.updated)
//   churn       two loops, each: create a grant of ORG, read with its key until the read API serves
//               it, give it a webhook (authorization.ended) on the receiver; every third expires on
//               its own (expiresAt 25 s on), the others are revoked, and their key is read again
//               past decision 29's bound, where it must be refused
// Setup first (OUT_DIR/ready when done): a first score and WATCHERS grants of ORG each with a
// webhook (score.updated) on the receiver, its URL /w/<clientId>; a churn grant's is /g/<clientId>.
//
// What is checked (each a failure when it does not hold; OUT_DIR/summary.json has the figures):
//   - a request that failed is a documented 503 (SERVICE_UNAVAILABLE with Retry-After) answered
//     within 5 s after a pod of the run was deleted (a step's delete, or a pod a rollout replaced)
//   - every acknowledged write is in the views: each score is the watchers' latest in turn and the
//     last one is served by every read-API pod; each created grant was served; each ended grant is
//     refused
//   - every expected delivery arrived: each score to each watcher, each ended grant's
//     authorization.ended, with its reason
//   - at least once, precisely: a webhook-id arrives more than once only as often as the notifier
//     recorded sending it (a retry after an attempt that failed, which the receiver may have taken);
//     none of the run's pods is killed without its grace period, so no takeover may repeat anything.
//     An ended grant's deliveries cannot be listed any more (its key is refused): a repeat of one is
//     allowed only as distinct attempts (each arrival a webhook-timestamp of its own), and counted
//   - no event of ORG is in the event log twice, and each expiring grant expired exactly once
//   - no revoked key was served after its bound
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { DOCUMENTED_503, paced, send, Tally, untilStopped } from './k8s-load-lib.mjs';

const require = createRequire(import.meta.url);
const { Kafka, logLevel } = require('kafkajs');
const { loadConfig } = require('@rsd/platform');
const { runtimeConfigSchema } = require('@rsd/runtime');
const { EVENT_TYPES, TOPICS } = require('@rsd/contracts');

const [outDir] = process.argv.slice(2);
const env = process.env;
const need = (name) => env[name] || (console.error(`k8s-mixed-load: ${name} is not set`), process.exit(2));
if (!outDir) {
  console.error('usage: k8s-mixed-load.mjs OUT_DIR (and the environment its header names)');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const URLS = {
  read: need('READ_URL'),
  credentials: need('CRED_URL'),
  ingest: need('INGEST_URL'),
  notifier: need('NOTIFIER_URL'),
  console: need('CONSOLE_URL'),
  receiver: need('RECEIVER_URL'),
  target: need('RECEIVER_TARGET'),
};
const ORG = need('ORG');
const TOKEN = need('TOKEN');
const POOL = JSON.parse(readFileSync(need('POOL'), 'utf8'));
const STEPS = need('STEPS');
const KUBECTL = need('KUBECTL');
const READ_RATE = Number(env.READ_RATE ?? 20);
const WATCHERS = Number(env.WATCHERS ?? 4);
const REVOKE_BOUND_MS = Number(env.REVOKE_BOUND_MS ?? 1_000);
const PENDING_BOUND_MS = Number(env.PENDING_BOUND_MS ?? 16_000);
/** Decision 52 for this run: a failure may come only this long after a pod was deleted. */
const AFTER_KILL_MS = 5_000;
const EXPIRES_IN_MS = 25_000;
/** How long the deliveries may take to arrive once the load stops, at most. */
const SETTLE_MS = 180_000;

const json = { 'content-type': 'application/json' };
const asOrg = { authorization: `Bearer ${TOKEN}`, ...json };
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

// ---------------------------------------------------------------- what happened

/** Every request, by operation: its tally, and its failures with when they came. */
const tallies = {};
/** When each request ended, for the count of each step's requests. */
const timeline = [];
/** What answers each operation as it should be answered; anything else is a failure. */
const EXPECTED = {
  read: [200],
  console: [200],
  ingest: [202],
  create: [201],
  'create-read': [200],
  webhook: [201],
  revoke: [200, 202],
  'revoked-read': [200, 401],
};
function record(op, result) {
  (tallies[op] ??= new Tally()).add(result, op, EXPECTED[op]);
  timeline.push(result.at);
  return result;
}
const ok = (result, ...statuses) => result.error === undefined && statuses.includes(result.status);

/** Acknowledged writes. */
const scores = []; // { date, score, at }
const grants = []; // { clientId, apiKey, expiresAt?, createdAt, servedAfterMs?, webhookId?, revokedAt?, revokeStatus?, end? }
const watchers = []; // { clientId, apiKey, webhookId }
const violations = []; // { at, what }

// ---------------------------------------------------------------- the operations

const FIRST_DAY = Date.parse('2015-01-01T00:00:00Z');
const dayOf = (n) => new Date(FIRST_DAY + n * 86_400_000).toISOString().slice(0, 10);
const pillarsOf = (score) => ({
  structuralIntegrity: score,
  failureResistance: score,
  deviceHealth: score,
  recoveryCapability: score,
});
// Any of the grades (contracts' GRADES): the score engine's, not derived here.
const gradeOf = (score) => (score >= 50 ? 'Strengthen' : 'Improve');

let day = 0;
async function ingestOne() {
  const score = 1 + (day % 99);
  const body = { organizationId: ORG, scoreDate: dayOf(day), score, grade: gradeOf(score), pillarScores: pillarsOf(score) };
  const result = record('ingest', await send(`${URLS.ingest}/scores`, { method: 'POST', headers: asOrg, body: JSON.stringify(body) }));
  if (ok(result, 202)) scores.push({ date: body.scoreDate, score, at: result.at });
  day += 1;
  return result;
}

async function createGrant(expiresAt) {
  const body = { recipientType: 'auditor', scopes: ['qr_score'], ...(expiresAt ? { expiresAt: new Date(expiresAt).toISOString() } : {}) };
  const result = record(
    'create',
    await send(`${URLS.credentials}/organizations/${ORG}/authorizations`, { method: 'POST', headers: asOrg, body: JSON.stringify(body) }),
  );
  return ok(result, 201) ? { clientId: result.json.clientId, apiKey: result.json.apiKey, createdAt: result.at } : undefined;
}

const readScore = (grant, base = URLS.read) =>
  send(`${base}/customers/${grant.clientId}/score`, { headers: { 'x-api-key': grant.apiKey } });

/** Reads with a new grant's key until the read API serves it (the create is in the views). */
async function untilServed(grant, op, timeoutMs = 20_000) {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const result = await readScore(grant);
    // Refused as unknown (401, or 404 CREDENTIAL_NOT_FOUND) while the views catch up: the documented
    // eventual consistency, not a failure; how long it lasts is `servedAfterMs`.
    const unknown = result.status === 401 || (result.status === 404 && result.json?.code === 'CREDENTIAL_NOT_FOUND');
    if (result.error !== undefined || !unknown) record(op, result);
    if (ok(result, 200)) return Date.now() - started;
    await sleep(200);
  }
  return undefined;
}

/** A webhook on the receiver for a grant, once the notifier knows the grant (404 CREDENTIAL_NOT_FOUND until then). */
async function webhookFor(grant, path, events, timeoutMs = 20_000) {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const result = await send(`${URLS.notifier}/customers/${grant.clientId}/webhooks`, {
      method: 'POST',
      headers: { 'x-api-key': grant.apiKey, ...json },
      body: JSON.stringify({ url: `${URLS.target}${path}`, events }),
    });
    if (ok(result, 404) && result.json?.code === 'CREDENTIAL_NOT_FOUND') {
      await sleep(200);
      continue;
    }
    record('webhook', result);
    return ok(result, 201) ? result.json.id : undefined;
  }
  return undefined;
}

async function revoke(grant) {
  const result = record(
    'revoke',
    await send(`${URLS.credentials}/organizations/${ORG}/authorizations/${grant.clientId}/revoke`, { method: 'POST', headers: asOrg }),
  );
  if (!ok(result, 200, 202)) return;
  grant.revokedAt = result.at;
  grant.revokeStatus = result.status;
  // Decision 29: past its bound, no replica serves the key. Read it once past the bound, and again later.
  const bound = result.status === 200 ? REVOKE_BOUND_MS : PENDING_BOUND_MS;
  for (const after of [bound + 100, bound + 2_000]) {
    await sleep(Math.max(0, grant.revokedAt + after - Date.now()));
    const sentAt = Date.now();
    const read = record('revoked-read', await readScore(grant));
    if (ok(read, 200))
      violations.push({
        at: read.at,
        what: `revoked key of ${grant.clientId} served ${sentAt - grant.revokedAt} ms after its revoke answered ${grant.revokeStatus}`,
      });
  }
}

let churned = 0;
async function churnOne() {
  churned += 1;
  const expiresAt = churned % 3 === 0 ? Date.now() + EXPIRES_IN_MS : undefined;
  const grant = await createGrant(expiresAt);
  if (!grant) return;
  if (expiresAt) grant.expiresAt = expiresAt;
  grants.push(grant);
  grant.servedAfterMs = await untilServed(grant, 'create-read');
  grant.webhookId = await webhookFor(grant, `/g/${grant.clientId}`, ['authorization.ended']);
  if (!expiresAt) await revoke(grant);
}

// ---------------------------------------------------------------- the pods' deletions

/** When each pod of rsd was first seen being deleted (a step's delete, or a rollout's). */
const deletions = new Map();
const watcher = spawn(
  KUBECTL,
  ['-n', 'rsd', 'get', 'pods', '--watch', '-o', 'jsonpath={.metadata.name} {.metadata.deletionTimestamp}{"\\n"}'],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
let pending = '';
watcher.stdout.on('data', (chunk) => {
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop();
  for (const line of lines) {
    const [name, deletion] = line.trim().split(' ');
    if (name && deletion && !deletions.has(name)) deletions.set(name, Date.now());
  }
});

// ---------------------------------------------------------------- setup

async function setup() {
  const first = await ingestOne();
  if (!ok(first, 202)) throw new Error(`the first score was refused: ${first.status ?? first.error} ${first.body ?? ''}`);
  for (let n = 0; n < WATCHERS; n += 1) {
    const grant = await createGrant();
    if (!grant) throw new Error('a watcher grant was refused');
    const webhookId = await webhookFor(grant, `/w/${grant.clientId}`, ['score.updated']);
    if (!webhookId) throw new Error(`no webhook for the watcher ${grant.clientId}`);
    watchers.push({ ...grant, webhookId });
  }
  // Deliveries start from the first score after the webhooks exist: a second one, acknowledged now.
  scores.length = 0;
  await ingestOne();
}

// ---------------------------------------------------------------- the checks

async function receiverRecord() {
  const result = await send(`${URLS.receiver}/record`);
  if (!ok(result, 200)) throw new Error(`the receiver's record: ${result.status ?? result.error}`);
  return result.json;
}

/** What each delivery expected is, by key `path|type|detail`, and when the write behind it was acknowledged. */
function expectedDeliveries() {
  const expected = new Map();
  for (const watcher of watchers)
    for (const score of scores) expected.set(`/w/${watcher.clientId}|score.updated|${score.date}`, { at: score.at, kind: 'score' });
  for (const grant of grants) {
    if (!grant.webhookId) continue;
    if (grant.revokedAt) expected.set(`/g/${grant.clientId}|authorization.ended|revoked`, { at: grant.revokedAt, kind: 'revoked' });
    else if (grant.expiresAt) expected.set(`/g/${grant.clientId}|authorization.ended|expired`, { at: grant.expiresAt, kind: 'expired' });
  }
  return expected;
}
const keyOf = (delivery) => `${delivery.path}|${delivery.type}|${delivery.type === 'score.updated' ? delivery.scoreDate : delivery.reason}`;

async function settle(expected) {
  const lastExpiry = Math.max(0, ...grants.map((grant) => grant.expiresAt ?? 0));
  const until = Date.now() + SETTLE_MS;
  let deliveries = [];
  while (Date.now() < until) {
    deliveries = await receiverRecord();
    const arrived = new Set(deliveries.map(keyOf));
    if (Date.now() > lastExpiry + 5_000 && [...expected.keys()].every((key) => arrived.has(key))) break;
    await sleep(1_000);
  }
  return deliveries;
}

/**
 * The attempts the notifier recorded as sent, by webhook-id, for the webhooks whose ids arrived more
 * than once; and the paths whose deliveries could not be listed (a grant whose key has ended).
 */
async function recordedAttempts(repeatedIds, deliveries) {
  const owners = new Map([
    ...watchers.map((grant) => [`/w/${grant.clientId}`, grant]),
    ...grants.map((grant) => [`/g/${grant.clientId}`, grant]),
  ]);
  const attempts = new Map();
  const unlisted = new Set();
  const paths = new Set(deliveries.filter((delivery) => repeatedIds.has(delivery.id)).map((delivery) => delivery.path));
  for (const path of paths) {
    const grant = owners.get(path);
    if (!grant?.webhookId) continue;
    const result = await send(`${URLS.notifier}/customers/${grant.clientId}/webhooks/${grant.webhookId}/deliveries`, {
      headers: { 'x-api-key': grant.apiKey },
    });
    if (!ok(result, 200)) {
      unlisted.add(path);
      continue;
    }
    for (const attempt of result.json.deliveries)
      if (attempt.attemptedAt && attempt.status !== 'skipped') attempts.set(attempt.messageId, (attempts.get(attempt.messageId) ?? 0) + 1);
  }
  return { attempts, unlisted };
}

/** The organization's events in the event log, read from the beginning to the end as of now. */
async function eventLog() {
  const config = loadConfig(runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka'] }), { ...env, RUNTIME: 'distributed' });
  const kafka = new Kafka({ brokers: config.KAFKA_BROKERS, clientId: `mixed-${ORG}`, logLevel: logLevel.NOTHING, ...config.engines.kafka });
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(TOPICS.authorizations);
  await admin.disconnect();
  const left = new Map(ends.filter((end) => Number(end.high) > Number(end.low)).map((end) => [end.partition, Number(end.high)]));
  const events = [];
  const consumer = kafka.consumer({ groupId: `mixed-check-${ORG}-${Date.now()}` });
  await consumer.connect();
  await consumer.subscribe({ topics: [TOPICS.authorizations], fromBeginning: true });
  await new Promise((done, fail) => {
    if (left.size === 0) done();
    const timer = setTimeout(() => fail(new Error('the event log was not read to its end within 60 s')), 60_000);
    consumer
      .run({
        eachMessage: ({ partition, message }) => {
          const event = JSON.parse(message.value?.toString() ?? '{}');
          if (event.data?.organizationId === ORG)
            events.push({
              id: event.id,
              type: event.type,
              clientId: event.data.clientId,
              revision: event.data.revision,
              time: Date.parse(event.time),
            });
          if (Number(message.offset) + 1 >= (left.get(partition) ?? Infinity)) left.delete(partition);
          if (left.size === 0) {
            clearTimeout(timer);
            done();
          }
          return Promise.resolve();
        },
      })
      .catch(fail);
  });
  await consumer.disconnect();
  return events;
}

/** The pods of a Deployment (its app.kubernetes.io/name) as the API server lists them. */
async function podsOf(name) {
  const output = await new Promise((done, fail) => {
    const child = spawn(KUBECTL, ['-n', 'rsd', 'get', 'pods', '-l', `app.kubernetes.io/name=${name}`, '-o', 'json'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (chunk) => (text += chunk));
    child.on('close', (code) => (code === 0 ? done(text) : fail(new Error(`kubectl get pods: ${code}`))));
  });
  return JSON.parse(output).items;
}

async function readPodAddresses() {
  const ready = (pod) => (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  return (await podsOf('rsd-read-api')).filter((pod) => !pod.metadata.deletionTimestamp && ready(pod)).map((pod) => pod.status.podIP);
}

/**
 * Decision 52 counts what a takeover may repeat, in the replica that takes over: events the relay
 * published again (credentials) and deliveries sent first after a takeover (notifier). A deleted pod
 * takes its counters with it, so every pod is read every few seconds and its highest value kept.
 */
const TAKEOVER_COUNTERS = [
  { deployment: 'rsd-credentials', port: 8081, metric: 'rsd_outbox_takeover_republished_total', key: 'republished' },
  { deployment: 'rsd-notifier', port: 8083, metric: 'rsd_webhook_takeover_resumed_total', key: 'resumed' },
];
const counted = { republished: new Map(), resumed: new Map() };
async function sampleTakeoverCounters() {
  for (const { deployment, port, metric, key } of TAKEOVER_COUNTERS) {
    const pods = await podsOf(deployment).catch(() => []);
    for (const pod of pods) {
      if (!pod.status.podIP) continue;
      const text = await fetch(`http://${pod.status.podIP}:${port}/metrics`, { signal: AbortSignal.timeout(2_000) })
        .then((answer) => answer.text())
        .catch(() => '');
      const value = text
        .split('\n')
        .filter((line) => line.startsWith(`${metric} `) || line.startsWith(`${metric}{`))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
      counted[key].set(pod.metadata.name, Math.max(counted[key].get(pod.metadata.name) ?? 0, value));
    }
  }
}
const countedTotal = (key) => [...counted[key].values()].reduce((a, b) => a + b, 0);

// ---------------------------------------------------------------- the table

function stepsOf(started) {
  const marks = existsSync(STEPS)
    ? readFileSync(STEPS, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
  const steps = [{ name: 'load, before any step', kind: 'load', from: started }];
  for (const mark of marks) steps.push({ name: mark.name, kind: mark.kind, from: mark.at });
  // The last step also owns what comes after the load: expiries due then, and late answers.
  return steps.map((step, i) => ({ ...step, to: steps[i + 1]?.from ?? Infinity }));
}

// ---------------------------------------------------------------- run

const started = Date.now();
try {
  await setup();
} catch (error) {
  console.error(`k8s-mixed-load: setup failed: ${error.message}`);
  watcher.kill();
  process.exit(1);
}
writeFileSync(`${outDir}/ready`, `${Date.now()}\n`);
process.stderr.write(`k8s-mixed-load: ${WATCHERS} watchers with webhooks; the load runs until SIGTERM\n`);

let stopping = false;
const stopped = () => stopping;
untilStopped().then(() => (stopping = true));
const loops = [
  paced(1 / 3, 1, stopped, sampleTakeoverCounters),
  paced(READ_RATE, 4, stopped, async (turn) => {
    const credential = POOL[turn % POOL.length];
    record('read', await readScore(credential));
  }),
  paced(2, 1, stopped, async () => record('console', await send(`${URLS.console}/.well-known/jwks.json`))),
  paced(1, 1, stopped, ingestOne),
  paced(0.5, 2, stopped, churnOne),
];
await Promise.all(loops);
const loadStopped = Date.now();
process.stderr.write('k8s-mixed-load: load stopped; waiting for the deliveries\n');

const expected = expectedDeliveries();
const deliveries = await settle(expected);
watcher.kill();
const arrivedKeys = new Map();
const timesById = new Map();
for (const delivery of deliveries) {
  arrivedKeys.set(keyOf(delivery), (arrivedKeys.get(keyOf(delivery)) ?? new Set()).add(delivery.id));
  timesById.set(delivery.id, (timesById.get(delivery.id) ?? 0) + 1);
}
const repeatedIds = new Set([...timesById].filter(([, n]) => n > 1).map(([id]) => id));
await sampleTakeoverCounters();
const { attempts, unlisted } = await recordedAttempts(repeatedIds, deliveries);
const arrivals = (id) => deliveries.filter((delivery) => delivery.id === id);
const unlistedIds = [...repeatedIds].filter((id) => unlisted.has(arrivals(id)[0].path));
const distinctAttempts = (id) => new Set(arrivals(id).map((delivery) => delivery.timestamp)).size === timesById.get(id);
const unexplained = [...repeatedIds].filter((id) =>
  unlistedIds.includes(id) ? !distinctAttempts(id) : timesById.get(id) > (attempts.get(id) ?? 1),
);
// Beyond the notifier's own retries, a takeover may send again what the lost replica had in flight:
// as many as the replicas that took over counted.
const unallowed = unexplained.length <= countedTotal('resumed') ? [] : unexplained;
for (const id of unallowed)
  violations.push({
    at: Date.now(),
    what: unlistedIds.includes(id)
      ? `webhook-id ${id} arrived ${timesById.get(id)} times, not each a distinct attempt`
      : `webhook-id ${id} arrived ${timesById.get(id)} times, the notifier recorded ${attempts.get(id) ?? 'no'} attempts`,
  });

// Each expected delivery arrived, under one webhook-id (two ids would be two deliveries of one change).
const lost = [...expected].filter(([key]) => !arrivedKeys.has(key));
const split = [...expected].filter(([key]) => (arrivedKeys.get(key)?.size ?? 0) > 1);
for (const [key, { at }] of lost) violations.push({ at, what: `lost: ${key}` });
for (const [key, { at }] of split) violations.push({ at, what: `delivered under ${arrivedKeys.get(key).size} webhook-ids: ${key}` });

// The views: each grant was served once created; each ended grant is refused now; the last score is every read-API pod's latest.
for (const grant of grants) {
  if (grant.servedAfterMs === undefined)
    violations.push({ at: grant.createdAt, what: `grant ${grant.clientId} acknowledged but never served` });
  if (grant.revokedAt || (grant.expiresAt && grant.expiresAt < Date.now())) {
    const read = await readScore(grant);
    if (!ok(read, 401)) violations.push({ at: Date.now(), what: `ended grant ${grant.clientId} answered ${read.status ?? read.error}` });
  }
}
const last = scores.at(-1);
const pods = await readPodAddresses();
for (const address of pods) {
  const read = await readScore(watchers[0], `http://${address}:8080/v1`);
  if (!ok(read, 200) || read.json.scoreDate !== last.date)
    violations.push({
      at: Date.now(),
      what: `read-API pod ${address} serves ${read.json?.scoreDate ?? read.status ?? read.error}, not the last score ${last.date}`,
    });
}

// The event log: nothing twice; each expiring grant expired once.
let events = [];
try {
  events = await eventLog();
} catch (error) {
  violations.push({ at: Date.now(), what: `the event log could not be read: ${error.message}` });
}
const eventTimes = new Map();
for (const event of events) eventTimes.set(event.id, [...(eventTimes.get(event.id) ?? []), event]);
const twice = [...eventTimes.values()].filter((copies) => copies.length > 1);
// An event twice only across a takeover, and no more often than the relays that took over counted.
const extraCopies = twice.reduce((sum, copies) => sum + copies.length - 1, 0);
if (extraCopies > countedTotal('republished'))
  for (const copies of twice)
    violations.push({
      at: copies[0].time,
      what: `event ${copies[0].id} (${copies[0].type}) published ${copies.length} times; relays that took over counted ${countedTotal('republished')}`,
    });
// What the log holds of a grant whose end was lost or not enforced: is its event there at all?
const logOf = (clientId) =>
  events
    .filter((event) => event.clientId === clientId)
    .map((event) => `${event.type.replace(/^com\.resiliencescore\.authorization\./, '').replace(/\.v1$/, '')} r${event.revision}`)
    .join(', ');
for (const violation of violations) {
  const clientId = /(rs_[A-Za-z0-9]+)/.exec(violation.what)?.[1];
  if (clientId && grants.some((grant) => grant.clientId === clientId))
    violation.what += ` (its events in the log: ${logOf(clientId) || 'none'})`;
}
const expiring = grants.filter((grant) => grant.expiresAt && !grant.revokedAt);
const expiredCount = (grant) =>
  events.filter((event) => event.type === EVENT_TYPES.authorizationExpired && event.clientId === grant.clientId).length;
for (const grant of expiring)
  if (expiredCount(grant) !== 1)
    violations.push({ at: grant.expiresAt, what: `grant ${grant.clientId} expired ${expiredCount(grant)} times` });
if (events.length === 0 && violations.every((v) => !v.what.startsWith('the event log')))
  violations.push({ at: Date.now(), what: `no event of ${ORG} read from the event log` });

// The requests: every failure documented and within 5 s of a deletion.
const kills = [...deletions.values()].sort((a, b) => a - b);
const steps = stepsOf(started);
for (const step of steps) if (step.kind === 'delete' && !kills.some((at) => Math.abs(at - step.from) < 2_000)) kills.push(step.from);
kills.sort((a, b) => a - b);
const failures = Object.values(tallies).flatMap((tally) => tally.failures);
const judged = failures.map((failure) => {
  const kill = kills.filter((at) => at <= failure.at).at(-1);
  const afterKill = kill === undefined ? undefined : failure.at - kill;
  const documented = failure.kind === 'status' && failure.detail === DOCUMENTED_503;
  return { ...failure, afterKill, fine: documented && afterKill !== undefined && afterKill <= AFTER_KILL_MS };
});
for (const failure of judged.filter((f) => !f.fine))
  violations.push({
    at: failure.at,
    what: `${failure.label}: ${failure.detail}${failure.afterKill === undefined ? ' before any deletion' : ` ${(failure.afterKill / 1000).toFixed(1)} s after a deletion`}`,
  });

// ---------------------------------------------------------------- print

const within = (step, at) => at >= step.from && at < step.to;
const rows = steps.map((step) => {
  const fails = judged.filter((failure) => within(step, failure.at));
  const late = fails.filter((failure) => failure.afterKill !== undefined).map((failure) => failure.afterKill / 1000);
  const inStep = [...expected].filter(([, { at }]) => within(step, at));
  const arrived = inStep.filter(([key]) => arrivedKeys.has(key)).length;
  const exps = expiring.filter((grant) => within(step, grant.expiresAt));
  return {
    step: step.name,
    requests: timeline.filter((at) => within(step, at)).length,
    documented503: fails.filter((failure) => failure.fine).length,
    otherFailures: fails.filter((failure) => !failure.fine).length,
    latestFailureAfterKillS: late.length ? Number(Math.max(...late).toFixed(1)) : null,
    deliveriesExpected: inStep.length,
    deliveriesArrived: arrived,
    duplicateIds: inStep.filter(([key]) => [...(arrivedKeys.get(key) ?? [])].some((id) => repeatedIds.has(id))).length,
    eventsTwice: twice.filter((copies) => within(step, copies[0].time)).length,
    expiriesDue: exps.length,
    expiriesFiredOnce: exps.filter((grant) => expiredCount(grant) === 1).length,
    lost: inStep.length - arrived,
  };
});
const columns = [
  ['step', 'step', 36],
  ['requests', 'requests', 8],
  ['documented503', '503s', 5],
  ['otherFailures', 'other', 5],
  ['latestFailureAfterKillS', 'latest s', 8],
  ['deliveriesExpected', 'expected', 8],
  ['deliveriesArrived', 'arrived', 7],
  ['duplicateIds', 'dup ids', 7],
  ['eventsTwice', 'events x2', 9],
  ['expiriesDue', 'expiries', 8],
  ['expiriesFiredOnce', 'fired', 5],
  ['lost', 'lost', 4],
];
const line = (cells) => cells.map((cell, i) => String(cell ?? '-').padEnd(columns[i][2])).join('  ');
console.log(line(columns.map(([, title]) => title)));
for (const row of rows) console.log(line(columns.map(([key]) => row[key])));
const totals = {
  requests: Object.fromEntries(
    Object.entries(tallies).map(([op, tally]) => [
      op,
      { sent: tally.sent, statuses: tally.statuses, errors: tally.errors, retried: tally.retried },
    ]),
  ),
  deliveries: {
    expected: expected.size,
    received: deliveries.length,
    distinctIds: timesById.size,
    idsTwice: repeatedIds.size,
    idsTwiceOfEndedGrants: unlistedIds.length,
    allowedByAttempts: repeatedIds.size - unallowed.length,
  },
  grants: {
    created: grants.length,
    withoutWebhookIn20s: grants.filter((g) => !g.webhookId).length,
    servedAfterMsMax: Math.max(0, ...grants.map((g) => g.servedAfterMs ?? 0)),
    revoked: grants.filter((g) => g.revokedAt).length,
    revokedPending: grants.filter((g) => g.revokeStatus === 202).length,
    expiring: expiring.length,
  },
  scores: scores.length,
  events: events.length,
  eventsTwice: twice.length,
  takeoverCounted: { republished: countedTotal('republished'), resumed: countedTotal('resumed') },
  repeatsUnexplainedByAttempts: unexplained.length,
  deletions: deletions.size,
  readPods: pods.length,
  settledAfterS: Math.round((Date.now() - loadStopped) / 1000),
};
console.log(`totals: ${JSON.stringify(totals)}`);
writeFileSync(`${outDir}/summary.json`, JSON.stringify({ rows, totals, violations }, null, 2));
if (violations.length > 0) {
  console.log(`FAIL: ${violations.length} violations`);
  for (const violation of violations.slice(0, 40)) console.log(`  ${new Date(violation.at).toISOString()} ${violation.what}`);
  process.exit(1);
}
console.log('mixed load: every check held');
process.exit(0);
