import { randomBytes, randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { chmod, cp, mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { signDevToken } from '@rsd/platform';
import { ingestAtRate, ingestGrants } from './ingest-rate';
import { enginesFromEnv, measureNotifierScale, NOTIFIER_SCALE_DEFAULTS, notifierScaleTable } from './notifier-scale';
import { productEnv, startDistributedProduct, startEmbeddedProduct, until, type Product } from './bench-products';
import { ownSession, profileArgs, ROOT, startNode, type Started } from './processes';

// `npm run bench`: the read API's throughput and latency on both runtimes beside a bare express
// baseline measured in the same run, then revocation-to-enforcement and ingest-to-readable latency,
// and (with the engines) decision 52's rows: ingest to readable at a rate, deliveries by notifier replicas.
// Load and servers share this machine's cores, the same way for every row, so compare ratios.

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TRIALS = Number(process.env.BENCH_TRIALS ?? 30);
/** Decision 52: a score's time from ingest to readable on every replica, at these rates, each for this long. */
const INGEST_RATES = [100, 1_000];
const INGEST_SECONDS = Number(process.env.BENCH_INGEST_SECONDS ?? 20);
const SECRET = randomBytes(32).toString('base64url');
const ORG = `bench-${randomUUID().slice(0, 8)}`;

interface Throughput {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

interface Latencies {
  name: string;
  p50: number;
  p99: number;
  max: number;
}

async function load(
  name: string,
  url: string,
  headers: Record<string, string> = {},
  connections = CONNECTIONS,
  /** Called between the warm-up and the measured run: where a caller reads the server's CPU time. */
  warmedUp: () => Promise<void> = () => Promise.resolve(),
): Promise<Throughput> {
  // A short warm-up, so JIT and caches are in the same state for every target.
  await autocannon({ url, headers, connections, duration: 2 });
  await warmedUp();
  const result = await autocannon({ url, headers, connections, duration: DURATION_S });
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx };
}

function percentiles(name: string, samples: number[]): Latencies {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { name, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN };
}

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const benchEnv = productEnv(SECRET);
const startEmbedded = (dataDir: string, env: Record<string, string> = {}, build = ROOT) =>
  startEmbeddedProduct(SECRET, dataDir, env, build);
const startDistributed = (replicas: number, build = ROOT, portBase = 18180, engines: Record<string, string> = {}) =>
  startDistributedProduct(SECRET, replicas, build, portBase, engines);

async function token(): Promise<string> {
  return signDevToken(SECRET, { org: ORG, scope: 'authorizations:write scores:write' });
}

/**
 * A distributed stack's one read-API replica, ready to be measured alone: a credential whose score it
 * serves (within `readyWithinMs`), and the credentials service paused. The replica is measured, not its
 * neighbours on these two cores: the credentials service, which folds the access log into usage counts
 * through FerretDB and PostgreSQL (in production on other machines), would take about a core of its
 * own. Paused for the turns (SIGSTOP), resumed by `stops` before the stack stops; the access log waits
 * for it in Kafka. docs/capacity.md models that projection.
 */
async function replicaAlone(
  product: Product,
  stops: (() => Promise<void>)[],
  readyWithinMs: number,
): Promise<{ clientId: string; apiKey: string }> {
  const credential = await createCredential(product);
  await postScore(product, 72);
  await until(async () => (await readScore(product.readApis[0]!, credential)).status === 200, readyWithinMs);
  const paused = product.credentialsPid;
  if (paused !== undefined) {
    process.kill(paused, 'SIGSTOP');
    stops.push(() => Promise.resolve(void process.kill(paused, 'SIGCONT')));
  }
  return credential;
}

async function createCredential(
  product: Product,
  scopes = ['qr_score', 'pillar_breakdown'],
): Promise<{ clientId: string; apiKey: string }> {
  const answer = await json(`${product.credentials}/v1/organizations/${ORG}/authorizations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await token()}`, 'content-type': 'application/json' },
    body: JSON.stringify({ recipientType: 'insurance_provider', scopes }),
  });
  if (answer.status !== 201) throw new Error(`create failed: ${answer.status}`);
  return answer.body as { clientId: string; apiKey: string };
}

async function postScore(product: Product, score: number): Promise<void> {
  const answer = await json(`${product.scoreIngest}/v1/scores`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await token()}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      organizationId: ORG,
      scoreDate: new Date().toISOString().slice(0, 10),
      score,
      grade: 'Strengthen',
      pillarScores: { structuralIntegrity: 70, failureResistance: 75, deviceHealth: 68, recoveryCapability: 77 },
    }),
  });
  if (answer.status !== 202) throw new Error(`score failed: ${answer.status}`);
}

const HISTORY_DAYS = 3 * 365;

/** Three years of daily scores, ending today (a later date is refused), in batches of 1,000. */
async function postHistory(product: Product): Promise<void> {
  const today = Date.parse(new Date().toISOString().slice(0, 10));
  const scores = Array.from({ length: HISTORY_DAYS }, (_, i) => ({
    organizationId: ORG,
    scoreDate: new Date(today - i * 86_400_000).toISOString().slice(0, 10),
    score: 40 + (i % 50),
    grade: 'Strengthen',
    pillarScores: { structuralIntegrity: 40 + (i % 50), failureResistance: 75, deviceHealth: 68 - (i % 7), recoveryCapability: 77 },
    // Older than any score the other measurements post, so the latest score stays theirs.
    calculatedAt: '2020-01-01T00:00:00.000Z',
  }));
  for (let at = 0; at < scores.length; at += 1000) {
    const answer = await json(`${product.scoreIngest}/v1/scores`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await token()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scores: scores.slice(at, at + 1000) }),
    });
    if (answer.status !== 202) throw new Error(`history failed: ${answer.status}`);
  }
}

/**
 * The history's first page and a page at its far end, each 366 days with pillar explanations, as
 * recipients read it: one request at a time (the latency goal is a request's, not a queue's under
 * saturation), then under the same 32 connections as the other rows.
 */
async function historyRows(product: Product): Promise<Throughput[]> {
  const credential = await createCredential(product, ['score_trend', 'pillar_breakdown']);
  await postHistory(product);
  const url = `${product.readApis[0]!}/v1/customers/${credential.clientId}/score/history?limit=366`;
  await until(
    async () => ((await json(url, { headers: { 'x-api-key': credential.apiKey } })).body as { scores?: unknown[] })?.scores?.length === 366,
    30_000,
  );
  const oldest = new Date(Date.parse(new Date().toISOString().slice(0, 10)) - (HISTORY_DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
  const headers = { 'x-api-key': credential.apiKey };
  const farEnd = `${url}&to=${addDays(oldest, 365)}`;
  return [
    await load(`newest 366 of ${HISTORY_DAYS} days, 1 connection`, url, headers, 1),
    await load(`${oldest} to ${addDays(oldest, 365)} (the far end), 1 connection`, farEnd, headers, 1),
    await load(`newest 366 of ${HISTORY_DAYS} days, ${CONNECTIONS} connections`, url, headers),
  ];
}

const addDays = (date: string, days: number) => new Date(Date.parse(date) + days * 86_400_000).toISOString().slice(0, 10);

const readScore = (url: string, credential: { clientId: string; apiKey: string }) =>
  json(`${url}/v1/customers/${credential.clientId}/score`, { headers: { 'x-api-key': credential.apiKey } });

const ROUNDS_IN_TURNS = 3;

/** User plus system CPU time of a process so far, in ms (Linux); undefined elsewhere. */
async function cpuMsOf(pid: number | undefined): Promise<number | undefined> {
  return pid === undefined ? undefined : ticksMsOf(`/proc/${pid}/stat`);
}

/**
 * The same for the process's main thread alone (its JavaScript, the event loop): the rest of the
 * process's time is its other threads' (V8's garbage collection and compilers, the access log's
 * writer, libuv's pool), which a run-to-run difference in the total can then be traced to.
 */
async function mainThreadCpuMsOf(pid: number | undefined): Promise<number | undefined> {
  return pid === undefined ? undefined : ticksMsOf(`/proc/${pid}/task/${pid}/stat`);
}

/** The main thread's voluntary context switches so far (Linux): each time its event loop slept for want of work. */
async function mainThreadWaitsOf(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  const status = await readFile(`/proc/${pid}/task/${pid}/status`, 'utf8').catch(() => '');
  const waits = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(status)?.[1];
  return waits === undefined ? undefined : Number(waits);
}

/**
 * BENCH_THREADS=1: each thread's CPU time so far by its name (V8's and libuv's helpers, the access
 * log's writer), summed over threads of one name, so a side's off-main cost can be told apart.
 */
async function threadCpuMsOf(pid: number | undefined): Promise<Map<string, number>> {
  const byName = new Map<string, number>();
  if (pid === undefined || process.env.BENCH_THREADS !== '1') return byName;
  for (const task of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    const stat = await readFile(`/proc/${pid}/task/${task}/stat`, 'utf8').catch(() => '');
    const comm = /\((.*)\)/.exec(stat)?.[1] ?? '?';
    const name = task === String(pid) ? 'main' : comm === 'WorkerThread' ? `${comm}-${task}` : comm;
    const fields = stat.split(') ')[1]?.split(' ') ?? [];
    byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10);
  }
  return byName;
}

async function ticksMsOf(statFile: string): Promise<number | undefined> {
  try {
    const fields = (await readFile(statFile, 'utf8')).split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** One side of an A/B: a read-API URL, its key, and the process whose CPU time is counted. */
interface Side {
  name: string;
  url: string;
  apiKey: string;
  pid: number | undefined;
}

interface Compared {
  rows: [Throughput, Throughput];
  /** Server CPU time per request, in µs (NaN where /proc is not there). */
  cpuUs: [number, number];
}

/**
 * Two servers side by side, loaded in turns (a, b, b, a, a, b) so that other work on the machine
 * weighs on both alike; with each server's CPU time per request, which such work disturbs less than
 * throughput. `settleMs` after each run: work a run leaves behind (a flush) belongs to its cost.
 */
async function inTurns(sides: [Side, Side], settleMs = 0): Promise<Compared> {
  const runs: [Throughput[], Throughput[]] = [[], []];
  const cpu = [
    { ms: 0, requests: 0 },
    { ms: 0, requests: 0 },
  ];
  for (let round = 0; round < ROUNDS_IN_TURNS; round += 1) {
    for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) {
      const side = sides[index]!;
      let before: number | undefined;
      const run = await load(side.name, side.url, { 'x-api-key': side.apiKey }, CONNECTIONS, async () => {
        before = await cpuMsOf(side.pid);
      });
      if (settleMs > 0) await new Promise((done) => setTimeout(done, settleMs));
      const after = await cpuMsOf(side.pid);
      runs[index]!.push(run);
      if (before !== undefined && after !== undefined) {
        cpu[index]!.ms += after - before;
        cpu[index]!.requests += run.rps * DURATION_S;
      }
    }
  }
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const row = (index: 0 | 1): Throughput => ({
    name: `${sides[index].name} (mean of ${ROUNDS_IN_TURNS} runs in turns)`,
    rps: mean(runs[index].map((run) => run.rps)),
    p50: Math.round(mean(runs[index].map((run) => run.p50))),
    p99: Math.round(mean(runs[index].map((run) => run.p99))),
    non2xx: runs[index].reduce((sum, run) => sum + run.non2xx, 0),
  });
  const usPerRequest = (index: 0 | 1) => (cpu[index]!.requests > 0 ? (cpu[index]!.ms * 1000) / cpu[index]!.requests : NaN);
  return { rows: [row(0), row(1)], cpuUs: [usPerRequest(0), usPerRequest(1)] };
}

const scoreSide = (name: string, product: Product, credential: { clientId: string; apiKey: string }): Side => ({
  name,
  url: `${product.readApis[0]!}/v1/customers/${credential.clientId}/score`,
  apiKey: credential.apiKey,
  pid: product.pid,
});

/** Decision 21's cost: the embedded /score with the access log on and off (ACCESS_LOG_ENABLED=false), in turns. */
async function accessLogComparison(): Promise<{ rows: Throughput[]; summary: string }> {
  const dirs = [await mkdtemp(join(tmpdir(), 'rsd-bench-access-on-')), await mkdtemp(join(tmpdir(), 'rsd-bench-access-off-'))];
  const products = { on: await startEmbedded(dirs[0]!), off: await startEmbedded(dirs[1]!, { ACCESS_LOG_ENABLED: 'false' }) };
  try {
    const credentials = { on: await createCredential(products.on), off: await createCredential(products.off) };
    await postScore(products.on, 72);
    await postScore(products.off, 72);
    const { rows, cpuUs } = await inTurns(
      [
        scoreSide('read API /score, embedded, access log on', products.on, credentials.on),
        scoreSide('read API /score, embedded, access log off (ACCESS_LOG_ENABLED=false)', products.off, credentials.off),
      ],
      1_500,
    );
    const summary =
      `Access log on vs off, embedded (${ROUNDS_IN_TURNS} runs each in turns): ${((rows[0].rps / rows[1].rps) * 100).toFixed(0)}% of the ` +
      `throughput (goal: at least 90%); server CPU per request ${cpuUs[0].toFixed(1)} µs on, ${cpuUs[1].toFixed(1)} µs off.`;
    return { rows, summary };
  } finally {
    await products.on.stop();
    await products.off.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

const PORTFOLIO_GRANTS = 100;

/**
 * Decision 42's cost: a page of 100 scores from a recipient account's portfolio (100 grants of 100
 * organizations, each with a score) against the single /score, on one embedded product, in turns.
 * The page reads the views in a bounded number of lookups, whatever its size: its cost per request
 * against the single score's says what a grant costs on a page.
 */
async function portfolioComparison(): Promise<{ rows: Throughput[]; summary: string }> {
  return onScoredProduct('portfolio', async (product, credential) => {
    const accountKey = await portfolioOf(product, PORTFOLIO_GRANTS);
    const pages: Side = {
      name: `read API /portfolio/scores, ${PORTFOLIO_GRANTS} grants a page, embedded`,
      url: `${product.readApis[0]!}/v1/portfolio/scores?limit=100`,
      apiKey: accountKey,
      pid: product.pid,
    };
    const { rows, cpuUs } = await inTurns([pages, scoreSide('read API /score, embedded (beside the portfolio)', product, credential)]);
    const summary =
      `Portfolio page of ${PORTFOLIO_GRANTS} scores vs /score, embedded (${ROUNDS_IN_TURNS} runs each in turns): ${rows[0].rps.toFixed(0)} pages/s ` +
      `against ${rows[1].rps.toFixed(0)} scores/s; server CPU per request ${cpuUs[0].toFixed(1)} µs a page (${(cpuUs[0] / PORTFOLIO_GRANTS).toFixed(1)} µs a grant), ` +
      `${cpuUs[1].toFixed(1)} µs a single score: a page costs ${(cpuUs[0] / cpuUs[1]).toFixed(1)} single reads (goal: at most 10).`;
    return { rows, summary };
  });
}

/**
 * Decision 55's cost: a grant's certificate as JSON (the history read by its index, the certificate
 * made and signed as a JWS, then the response signed as every read is) against the same grant's
 * /score (whose unchanged representation and signature are reused), on one embedded product, in
 * turns. BENCH_ONLY=certificate runs it alone.
 */
async function certificateComparison(): Promise<{ rows: Throughput[]; summary: string }> {
  return onScoredProduct('certificate', async (product, credential) => {
    await until(async () => (await readScore(product.readApis[0]!, credential)).status === 200, 10_000);
    const certificates: Side = {
      name: 'read API /certificate (JSON, a JWS per request), embedded',
      url: `${product.readApis[0]!}/v1/customers/${credential.clientId}/certificate`,
      apiKey: credential.apiKey,
      pid: product.pid,
    };
    const { rows, cpuUs } = await inTurns([
      certificates,
      scoreSide('read API /score, embedded (beside the certificate)', product, credential),
    ]);
    const summary =
      `Certificate (JSON) vs /score, embedded (${ROUNDS_IN_TURNS} runs each in turns): ${rows[0].rps.toFixed(0)} certificates/s against ` +
      `${rows[1].rps.toFixed(0)} scores/s; server CPU per request ${cpuUs[0].toFixed(1)} µs a certificate, ${cpuUs[1].toFixed(1)} µs a score.`;
    return { rows, summary };
  });
}

/** `work` on an embedded product of its own (a data directory `rsd-bench-<name>-…`) with one credential whose organization has a score; stopped and removed after. */
async function onScoredProduct<T>(
  name: string,
  work: (product: Product, credential: { clientId: string; apiKey: string }) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), `rsd-bench-${name}-`));
  const product = await startEmbedded(dir);
  try {
    const credential = await createCredential(product);
    await postScore(product, 72);
    return await work(product, credential);
  } finally {
    await product.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A recipient account holding `grants` grants of as many organizations, each organization with a score: its key. */
async function portfolioOf(product: Product, grants: number): Promise<string> {
  const orgs = Array.from({ length: grants }, (_, i) => `${ORG}-pf-${i}`);
  const engine = await signDevToken(SECRET, { scope: 'scores:write' });
  const scored = await json(`${product.scoreIngest}/v1/scores`, {
    method: 'POST',
    headers: { authorization: `Bearer ${engine}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      scores: orgs.map((organizationId, i) => ({
        organizationId,
        scoreDate: new Date().toISOString().slice(0, 10),
        score: 40 + (i % 50),
        grade: 'Strengthen',
        pillarScores: { structuralIntegrity: 70, failureResistance: 75, deviceHealth: 68, recoveryCapability: 77 },
      })),
    }),
  });
  if (scored.status !== 202) throw new Error(`portfolio scores failed: ${scored.status}`);
  const adminOf = async (org: string) => ({
    authorization: `Bearer ${await signDevToken(SECRET, { org, scope: 'authorizations:write' })}`,
    'content-type': 'application/json',
  });
  const linked = await json(`${product.credentials}/v1/organizations/${orgs[0]!}/authorizations`, {
    method: 'POST',
    headers: await adminOf(orgs[0]!),
    body: JSON.stringify({ recipientType: 'insurance_provider', scopes: ['qr_score'], keyDelivery: 'claimLink' }),
  });
  const claimUrl = (linked.body as { claim: { url: string } }).claim.url;
  const opened = await json(claimUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ into: 'account' }),
  });
  if (opened.status !== 201) throw new Error(`claim into an account failed: ${opened.status}`);
  const { accountId, accountKey } = opened.body as { accountId: string; accountKey: string };
  // Offers from these organizations join the account as they are made (decision 50): no acceptance one by one.
  const trusted = await json(`${product.credentials}/v1/portfolio/auto-accept`, {
    method: 'PUT',
    headers: { 'x-api-key': accountKey, 'content-type': 'application/json' },
    body: JSON.stringify({ organizationIds: orgs.slice(1) }),
  });
  if (trusted.status !== 200) throw new Error(`auto-accept failed: ${trusted.status}`);
  for (const org of orgs.slice(1)) {
    const granted = await json(`${product.credentials}/v1/organizations/${org}/authorizations`, {
      method: 'POST',
      headers: await adminOf(org),
      body: JSON.stringify({
        recipientType: 'insurance_provider',
        scopes: ['qr_score'],
        keyDelivery: 'account',
        recipientAccountId: accountId,
      }),
    });
    if (granted.status !== 201) throw new Error(`grant to the account failed: ${granted.status}`);
  }
  await until(async () => {
    const page = await json(`${product.readApis[0]!}/v1/portfolio/scores?limit=100`, { headers: { 'x-api-key': accountKey } });
    return (page.body as { items?: unknown[] } | undefined)?.items?.length === grants;
  }, 30_000);
  return accountKey;
}

/**
 * Decision 24's cost (the goal: at most 15 % of /score throughput): the read API alone
 * (bench/src/read-api-alone.ts), signed as shipped and with `--unsigned`, each on its own copy of one
 * data directory the product made, in turns.
 */
async function signingComparison(): Promise<{ rows: Throughput[]; summary: string }> {
  const made = await mkdtemp(join(tmpdir(), 'rsd-bench-signing-'));
  const copies = [`${made}-signed`, `${made}-unsigned`];
  try {
    const product = await startEmbedded(made);
    let credential: { clientId: string; apiKey: string };
    try {
      credential = await createCredential(product);
      await postScore(product, 72);
      await until(async () => (await readScore(product.readApis[0]!, credential)).status === 200, 10_000);
    } finally {
      await product.stop();
    }
    for (const copy of copies) await cp(made, copy, { recursive: true });
    const alone = (dataDir: string, args: string[]) =>
      startNode(
        'bench/dist/read-api-alone.js',
        args,
        { ...benchEnv, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
        (line) => line.msg === 'read api ready',
      );
    const servers = [await alone(copies[0]!, []), await alone(copies[1]!, ['--unsigned'])];
    try {
      const side = (name: string, server: Started): Side => ({
        name,
        url: `http://127.0.0.1:${String(server.ready.port)}/v1/customers/${credential.clientId}/score`,
        apiKey: credential.apiKey,
        pid: server.child.pid,
      });
      const { rows, cpuUs } = await inTurns([
        side('read API alone /score, signed as shipped', servers[0]!),
        side('read API alone /score, unsigned (the baseline, bench only)', servers[1]!),
      ]);
      const summary =
        `Signing, embedded read API alone (${ROUNDS_IN_TURNS} runs each in turns): signed /score at ${((rows[0].rps / rows[1].rps) * 100).toFixed(0)}% of ` +
        `the unsigned throughput, a cost of ${((1 - rows[0].rps / rows[1].rps) * 100).toFixed(1)}% (goal: at most 15%); server CPU per ` +
        `request ${cpuUs[0].toFixed(1)} µs signed, ${cpuUs[1].toFixed(1)} µs unsigned.`;
      return { rows, summary };
    } finally {
      for (const server of servers) await server.stop();
    }
  } finally {
    for (const dir of [made, ...copies]) await rm(dir, { recursive: true, force: true });
  }
}

/** The mandated-work floor (bench/floor/), started on a free port; it prints its Client ID and key. */
async function startFloor(logFile: string): Promise<{ side: Side; stop: () => Promise<void> }> {
  const port = await freePort();
  // It stops on SIGTERM by exiting, so a CPU profile (BENCH_PROFILE_DIR) is written; the floor itself is unchanged.
  const floor = join(ROOT, 'bench/floor/mandated-work-server.cjs');
  const stopOnSigterm = `process.once('SIGTERM', () => process.exit(0)); require(${JSON.stringify(floor)});`;
  const child = spawn(process.execPath, [...profileArgs(), '-e', stopOnSigterm], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), LOG: logFile },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: ownSession('floor'),
  });
  const [clientId, apiKey] = await new Promise<string[]>((done, fail) => {
    child.once('exit', (code) => fail(new Error(`the floor exited with ${String(code)}`)));
    child.stdout.once('data', (chunk: Buffer) => done(chunk.toString().trim().split(' ')));
  });
  child.removeAllListeners('exit');
  return {
    side: {
      name: 'mandated-work floor',
      url: `http://127.0.0.1:${port}/v1/customers/${clientId}/score`,
      apiKey: apiKey ?? '',
      pid: child.pid,
    },
    stop: () => new Promise((done) => (child.exitCode === null ? (child.once('exit', () => done()), child.kill('SIGTERM')) : done())),
  };
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? done(address.port) : fail(new Error('no port'))));
    });
  });
}

interface ReadPathRow extends Throughput {
  /** Server CPU time per request, in µs. */
  cpuUs: number;
  /** Of which its main thread's. */
  mainThreadCpuUs: number;
  /**
   * Its main thread's voluntary context switches per request: how often the event loop found nothing
   * to do and slept. Near 0, a wake-up serves many requests; near 1, each request wakes the server
   * alone and pays a wake-up's system calls by itself (see ownSession in processes.ts).
   */
  waitsPerRequest: number;
}

/**
 * One loaded run of a side, with its server's CPU time per request over the measured run alone (the
 * warm-up's requests are not counted), in all and on its main thread; with BENCH_THREADS=1, each
 * thread's too, on standard error.
 */
async function measured(side: Side): Promise<ReadPathRow> {
  let cpuBefore: number | undefined;
  let mainBefore: number | undefined;
  let waitsBefore: number | undefined;
  let threadsBefore = new Map<string, number>();
  const run = await load(side.name, side.url, side.apiKey ? { 'x-api-key': side.apiKey } : {}, CONNECTIONS, async () => {
    [cpuBefore, mainBefore, waitsBefore] = [await cpuMsOf(side.pid), await mainThreadCpuMsOf(side.pid), await mainThreadWaitsOf(side.pid)];
    threadsBefore = await threadCpuMsOf(side.pid);
  });
  const threadsAfter = await threadCpuMsOf(side.pid);
  const [cpuAfter, mainAfter, waitsAfter] = [await cpuMsOf(side.pid), await mainThreadCpuMsOf(side.pid), await mainThreadWaitsOf(side.pid)];
  const perRead = (before: number | undefined, after: number | undefined) =>
    before !== undefined && after !== undefined ? ((after - before) * 1000) / (run.rps * DURATION_S) : NaN;
  if (threadsAfter.size > 0) {
    const perThread = [...threadsAfter].map(([name, ms]) => `${name} ${perRead(threadsBefore.get(name) ?? 0, ms).toFixed(1)}`);
    process.stderr.write(`${side.name}: µs/request by thread: ${perThread.join(', ')}\n`);
  }
  const waitsPerRequest = waitsBefore !== undefined && waitsAfter !== undefined ? (waitsAfter - waitsBefore) / (run.rps * DURATION_S) : NaN;
  return { ...run, cpuUs: perRead(cpuBefore, cpuAfter), mainThreadCpuUs: perRead(mainBefore, mainAfter), waitsPerRequest };
}

/**
 * The read path's cost: bare express, the mandated-work floor and the product's /score, loaded in
 * turns (each round in another order) for ROUNDS_IN_TURNS rounds; each row is the median round.
 * BENCH_BEFORE=<checkout, built> adds that build's embedded /score (a change's before and after in
 * one run); KAFKA_BROKERS, MONGO_URL and REDIS_URL add one replica of a distributed read API;
 * BENCH_OTLP_ENDPOINT adds this build with every request traced and exported there; BENCH_NODE_BASELINE=1
 * adds bare express's answer written by node's http module alone (express's own share of the baseline).
 */
async function readPathInTurns(): Promise<{ rows: ReadPathRow[]; summary: string }> {
  const stops: (() => Promise<void>)[] = [];
  const dirs: string[] = [];
  const product = async (name: string, env: Record<string, string> = {}, build = ROOT): Promise<Side> => {
    const dir = await mkdtemp(join(tmpdir(), 'rsd-bench-read-path-'));
    dirs.push(dir);
    const started = await startEmbedded(dir, env, build);
    stops.push(() => started.stop());
    const credential = await createCredential(started);
    await postScore(started, 72);
    await until(async () => (await readScore(started.readApis[0]!, credential)).status === 200, 10_000);
    return scoreSide(name, started, credential);
  };
  try {
    const baseline = await startNode('bench/dist/bare-express.js', ['0'], {}, (line) => line.msg === 'baseline ready', {
      detached: ownSession('baseline'),
    });
    stops.push(() => baseline.stop());
    const bare: Side = {
      name: 'bare express, constant JSON',
      url: `http://127.0.0.1:${String(baseline.ready.port)}/v1/customers/rs_BENCHMARKBASELINE00000000/score`,
      apiKey: '',
      pid: baseline.child.pid,
    };
    const logDir = await mkdtemp(join(tmpdir(), 'rsd-bench-floor-'));
    dirs.push(logDir);
    const floor = await startFloor(join(logDir, 'floor.log'));
    stops.push(floor.stop);
    const sides = [bare, floor.side, await product('read API /score, embedded (this build)')];
    // What of bare express's cost is express's own: the same bytes written by node's http module alone.
    if (process.env.BENCH_NODE_BASELINE === '1') {
      const node = await startNode('bench/dist/bare-express.js', ['0', 'node'], {}, (line) => line.msg === 'baseline ready', {
        detached: ownSession('baseline'),
      });
      stops.push(() => node.stop());
      sides.push({
        ...bare,
        name: 'bare node:http, the same bytes',
        url: bare.url.replace(/:\d+\//, `:${String(node.ready.port)}/`),
        pid: node.child.pid,
      });
    }
    const before = process.env.BENCH_BEFORE;
    if (before) sides.push(await product(`read API /score, embedded (build at ${before})`, {}, before));
    // Decision 39's price with every request traced and exported (a receiver at that endpoint: scripts/otlp-receiver.sh up).
    const otlp = process.env.BENCH_OTLP_ENDPOINT;
    if (otlp) {
      const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_TRACES_SAMPLER: 'always_on' };
      sides.push(await product('read API /score, embedded, tracing on (every request sampled, OTLP)', tracing));
    }
    if (process.env.KAFKA_BROKERS && process.env.MONGO_URL && process.env.REDIS_URL) {
      const replica = async (name: string, build: string, portBase: number): Promise<Side> => {
        const distributed = await startDistributed(1, build, portBase);
        stops.push(() => distributed.stop());
        return scoreSide(name, distributed, await replicaAlone(distributed, stops, 30_000));
      };
      const alone = 'the credentials service paused';
      sides.push(await replica(`read API /score, distributed, one replica (this build; ${alone})`, ROOT, 18180));
      if (before) sides.push(await replica(`read API /score, distributed, one replica (build at ${before}; ${alone})`, before, 18280));
    }
    const runs = sides.map(() => [] as ReadPathRow[]);
    for (let round = 0; round < ROUNDS_IN_TURNS; round += 1) {
      // Each round starts with another side and runs backwards every other round, so no side always follows the same one.
      const order = sides.map((_, index) => (index + round) % sides.length);
      for (const index of round % 2 === 0 ? order : order.reverse()) {
        runs[index]!.push(await measured(sides[index]!));
      }
    }
    const rows = runs.map((sideRuns) => [...sideRuns].sort((a, b) => a.rps - b.rps)[Math.floor(sideRuns.length / 2)]!);
    const [bareRow, floorRow, productRow] = rows as [ReadPathRow, ReadPathRow, ReadPathRow];
    const summary =
      `Read path (${CONNECTIONS} connections, ${DURATION_S} s per run, median of ${ROUNDS_IN_TURNS} rounds in turns, ` +
      `${new Date().toISOString().slice(0, 10)}): the floor at ${(floorRow.rps / bareRow.rps).toFixed(2)}× bare express; ` +
      `embedded /score at ${(productRow.rps / floorRow.rps).toFixed(2)}× the floor (goal ≥ 0.9×) and ${(productRow.rps / bareRow.rps).toFixed(2)}× ` +
      `bare express; p99 ${productRow.p99} ms against the floor's ${floorRow.p99} ms (goal: at most 2 ms more); the floor's CPU per ` +
      `request / the product's ${(floorRow.cpuUs / productRow.cpuUs).toFixed(2)}; servers in a session of their own: ` +
      `${process.env.BENCH_OWN_SESSION ?? 'none'} (BENCH_OWN_SESSION).`;
    return { rows, summary };
  } finally {
    for (const stop of stops.reverse()) await stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

type EngineMode = 'plaintext' | 'secured';

/** Ports of their own for BENCH_ONLY=engines' two clusters, clear of `scripts/infra.sh cluster`'s defaults (and the fault suite's). */
const ENGINE_CLUSTER_PORTS: Record<EngineMode, Record<string, number>> = {
  plaintext: {
    CLUSTER_KAFKA_PORT: 28091,
    CLUSTER_KAFKA_CONTROLLER_PORT: 28191,
    CLUSTER_KAFKA_INTERNAL_PORT: 28291,
    CLUSTER_REDIS_PORT: 25091,
    CLUSTER_REDIS_BUS_PORT: 25191,
    CLUSTER_MONGO_PORT: 27071,
  },
  secured: {
    CLUSTER_KAFKA_PORT: 28391,
    CLUSTER_KAFKA_CONTROLLER_PORT: 28491,
    CLUSTER_KAFKA_INTERNAL_PORT: 28591,
    CLUSTER_REDIS_PORT: 25291,
    CLUSTER_REDIS_BUS_PORT: 25391,
    CLUSTER_MONGO_PORT: 27072,
  },
};

/**
 * `scripts/infra.sh cluster up` (secured) or `cluster up --plaintext` in `dir`, on its mode's ports:
 * the variables its `env` prints (what the product needs to reach it), and how to take it down.
 */
async function clusterUp(mode: EngineMode, dir: string): Promise<{ env: Record<string, string>; down: () => Promise<void> }> {
  const shellEnv = {
    ...process.env,
    CLUSTER_INFRA_DIR: dir,
    ...Object.fromEntries(Object.entries(ENGINE_CLUSTER_PORTS[mode]).map(([name, port]) => [name, String(port)])),
  };
  const infra = (...args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn('bash', [join(ROOT, 'scripts/infra.sh'), 'cluster', ...args], {
        cwd: ROOT,
        env: shellEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0
          ? resolve(out)
          : reject(new Error(`scripts/infra.sh cluster ${args.join(' ')} exited with ${code}\n${err.slice(-2000)}`)),
      );
    });
  const down = () => infra('down').then(() => undefined);
  try {
    const printed = await infra(...(mode === 'plaintext' ? ['up', '--plaintext'] : ['up']));
    const env = Object.fromEntries([...printed.matchAll(/^export ([A-Z_]+)=(.*)$/gm)].map(([, name, value]) => [name!, value!]));
    return { env, down };
  } catch (error) {
    await down().catch(() => undefined);
    throw error;
  }
}

interface EngineRounds {
  name: string;
  reads: ReadPathRow[];
  ingest: Latencies[];
}

/**
 * BENCH_ONLY=engines: decision 53's price. One read-API replica on the clustered engines in plaintext
 * (`scripts/infra.sh cluster up --plaintext`) and one on them secured (`cluster up`: Kafka SASL_SSL
 * with SCRAM-SHA-512, Redis TLS with an ACL user, the MongoDB-wire server over TLS with a password),
 * both clusters up at once, each replica with its own credentials and score-ingest services (the
 * credentials service paused while loading, as in the read path's turns). For BENCH_ROUNDS rounds
 * (default 3), in turns (each round in the other order): its /score loaded (its CPU per request
 * counted), then TRIALS scores ingested, each timed until the replica serves it.
 */
async function enginesComparison(): Promise<{ rounds: EngineRounds[]; summary: string }> {
  const roundsWanted = Number(process.env.BENCH_ROUNDS ?? 3);
  const stops: (() => Promise<void>)[] = [];
  const dirs: string[] = [];
  try {
    const sides: { side: Side; product: Product; credential: { clientId: string; apiKey: string } }[] = [];
    for (const [mode, portBase] of [
      ['plaintext', 18480],
      ['secured', 18580],
    ] as const) {
      const dir = await mkdtemp(join(tmpdir(), `rsd-engines-${mode}-`));
      dirs.push(dir);
      // Run as root, the script runs PostgreSQL as the user postgres, which must reach its directory.
      await chmod(dir, 0o755);
      const cluster = await clusterUp(mode, dir);
      stops.push(cluster.down);
      process.stderr.write(`engines: the ${mode} cluster is up (${new Date().toISOString()})\n`);
      const product = await startDistributed(1, ROOT, portBase, cluster.env);
      stops.push(() => product.stop());
      const credential = await replicaAlone(product, stops, 60_000);
      sides.push({
        side: scoreSide(`read API /score, distributed, one replica, ${mode} engines`, product, credential),
        product,
        credential,
      });
    }
    const rounds: EngineRounds[] = sides.map(({ side }) => ({ name: side.name, reads: [], ingest: [] }));
    for (let round = 0; round < roundsWanted; round += 1) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const index of order) {
        const { side, product, credential } = sides[index]!;
        rounds[index]!.reads.push(await measured(side));
        rounds[index]!.ingest.push(percentiles(side.name, await ingestLatency(product, credential)));
        const [read, ingest] = [rounds[index]!.reads.at(-1)!, rounds[index]!.ingest.at(-1)!];
        process.stderr.write(
          `engines: round ${round + 1}, ${side.name}: ${read.rps.toFixed(0)} requests/s, p99 ${read.p99} ms, ` +
            `${read.cpuUs.toFixed(1)} µs/request; ingested → readable p50 ${ingest.p50.toFixed(1)} ms\n`,
        );
      }
    }
    // What each replica warned of while loaded (a rate limiter counting alone, a broker it could not reach): a side that
    // struggled with its engines is told apart from one that paid for TLS.
    for (const { side, product } of sides) {
      const warnings = new Map<string, number>();
      const log = product.readApiLog ? await readFile(product.readApiLog, 'utf8').catch(() => '') : '';
      for (const line of log.split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { level?: number; msg?: string };
        if ((entry.level ?? 0) >= 40) warnings.set(entry.msg ?? '?', (warnings.get(entry.msg ?? '?') ?? 0) + 1);
      }
      const listed = [...warnings].map(([msg, count]) => `${count}× ${msg}`).join('; ');
      process.stderr.write(`engines: ${side.name} warned: ${listed || 'nothing'}\n`);
    }
    const [plain, secured] = rounds as [EngineRounds, EngineRounds];
    const ratio = median(secured.reads.map((row) => row.rps)) / median(plain.reads.map((row) => row.rps));
    const summary =
      `Engines in plaintext and secured (${CONNECTIONS} connections, ${DURATION_S} s per run, ${roundsWanted} rounds in turns, ` +
      `${TRIALS} scores ingested per round, ${new Date().toISOString().slice(0, 10)}): the replica on secured engines answers ` +
      `${ratio.toFixed(2)}× the requests per second of the one on plaintext engines (medians); ` +
      `server CPU per request ${median(secured.reads.map((row) => row.cpuUs)).toFixed(1)} µs against ${median(plain.reads.map((row) => row.cpuUs)).toFixed(1)} µs; ` +
      `ingested → readable p50 ${median(secured.ingest.map((row) => row.p50)).toFixed(1)} ms against ${median(plain.ingest.map((row) => row.p50)).toFixed(1)} ms.`;
    return { rounds, summary };
  } finally {
    for (const stop of stops.reverse()) await stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** "median (min–max)" of a column over the rounds. */
function medianAndRange(values: number[], digits: number): string {
  return `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
}

function enginesTable({ rounds, summary }: { rounds: EngineRounds[]; summary: string }): string[] {
  return [
    summary,
    '',
    '| target | requests/s | p50 ms | p99 ms | server CPU µs/request | ingested → readable p50 ms | p99 ms | non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rounds.map(
      ({ name, reads, ingest }) =>
        `| ${name} (median (min–max) of ${reads.length} rounds) | ${medianAndRange(
          reads.map((row) => row.rps),
          0,
        )} | ${medianAndRange(
          reads.map((row) => row.p50),
          0,
        )} | ${medianAndRange(
          reads.map((row) => row.p99),
          0,
        )} | ${medianAndRange(
          reads.map((row) => row.cpuUs),
          1,
        )} | ${medianAndRange(
          ingest.map((row) => row.p50),
          1,
        )} | ${medianAndRange(
          ingest.map((row) => row.p99),
          1,
        )} | ${reads.reduce((sum, row) => sum + row.non2xx, 0)} |`,
    ),
    '',
  ];
}

/**
 * BENCH_ONLY=fresh-processes: what moves from one process to the next. BENCH_PROCESSES (default 6)
 * pairs, each a newly started embedded product and a newly started floor, loaded one after the other
 * alone (2 s of warm-up, then DURATION_S measured, the server's CPU over the measured run), as an
 * outside harness would start and load them: a swing that is the product's own (a process that starts
 * slow and stays slow) shows in its column and not in the floor's.
 */
async function freshProcesses(): Promise<{ rows: ReadPathRow[][]; summary: string }> {
  const pairs = Number(process.env.BENCH_PROCESSES ?? 6);
  const rows: ReadPathRow[][] = [];
  for (let pair = 0; pair < pairs; pair += 1) {
    const dir = await mkdtemp(join(tmpdir(), 'rsd-bench-fresh-'));
    try {
      const started = await startEmbedded(dir);
      let product: ReadPathRow;
      try {
        const credential = await createCredential(started);
        await postScore(started, 72);
        await until(async () => (await readScore(started.readApis[0]!, credential)).status === 200, 10_000);
        product = await measured(scoreSide('read API /score, embedded', started, credential));
      } finally {
        await started.stop();
      }
      const floor = await startFloor(join(dir, 'floor.log'));
      try {
        rows.push([product, await measured(floor.side)]);
      } finally {
        await floor.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const spread = (values: number[]) =>
    `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)} µs, ${((Math.max(...values) / Math.min(...values) - 1) * 100).toFixed(0)} % apart`;
  const [products, floors] = [rows.map(([product]) => product!), rows.map(([, floor]) => floor!)];
  const summary =
    `Fresh processes (${pairs} pairs, each started anew and loaded alone, ${CONNECTIONS} connections, ${DURATION_S} s measured after 2 s, ` +
    `${new Date().toISOString().slice(0, 10)}): the embedded /score at ${(median(products.map((row) => row.rps)) / median(floors.map((row) => row.rps))).toFixed(2)}× ` +
    `the floor (medians); server CPU per request ${spread(products.map((row) => row.cpuUs))} for the product, ${spread(floors.map((row) => row.cpuUs))} for the floor.`;
  return { rows, summary };
}

function freshProcessesTable({ rows, summary }: { rows: ReadPathRow[][]; summary: string }): string[] {
  return [
    summary,
    '',
    '| pair | product requests/s | floor requests/s | product / floor | product CPU µs/request (main) | floor CPU µs/request (main) |',
    '|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      ([product, floor], index) =>
        `| ${index + 1} | ${product!.rps.toFixed(0)} | ${floor!.rps.toFixed(0)} | ${(product!.rps / floor!.rps).toFixed(2)}× | ` +
        `${microseconds(product!.cpuUs)} (${microseconds(product!.mainThreadCpuUs)}) | ${microseconds(floor!.cpuUs)} (${microseconds(floor!.mainThreadCpuUs)}) |`,
    ),
    '',
  ];
}

const microseconds = (value: number) => (Number.isNaN(value) ? '–' : value.toFixed(1));

function readPathTable({ rows, summary }: { rows: ReadPathRow[]; summary: string }): string[] {
  const [bare, floor] = rows as [ReadPathRow, ReadPathRow];
  return [
    summary,
    '',
    '| target | requests/s | ratio to the floor | ratio to bare express | p50 ms | p99 ms | server CPU µs/request | of which the main thread | main thread waits/request | non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (row) =>
        `| ${row.name} | ${row.rps.toFixed(0)} | ${(row.rps / floor.rps).toFixed(2)}× | ${(row.rps / bare.rps).toFixed(2)}× | ${row.p50} | ` +
        `${row.p99} | ${microseconds(row.cpuUs)} | ${microseconds(row.mainThreadCpuUs)} | ${row.waitsPerRequest.toFixed(2)} | ${row.non2xx} |`,
    ),
    '',
  ];
}

/** From the credentials service's 200 to the moment every read-API replica answers 401. */
async function revocationLatency(product: Product): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < TRIALS; i += 1) {
    const credential = await createCredential(product);
    for (const url of product.readApis) await until(async () => (await readScore(url, credential)).status === 200, 10_000);
    const revoked = await json(`${product.credentials}/v1/organizations/${ORG}/authorizations/${credential.clientId}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await token()}` },
    });
    const t0 = performance.now();
    if (revoked.status !== 200) throw new Error(`revoke failed: ${revoked.status}`);
    await Promise.all(product.readApis.map((url) => until(async () => (await readScore(url, credential)).status === 401, 10_000)));
    samples.push(performance.now() - t0);
  }
  return samples;
}

/** From score-ingest's 202 to the moment the read API serves the new score. */
async function ingestLatency(product: Product, credential: { clientId: string; apiKey: string }): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < TRIALS; i += 1) {
    const value = i % 2 === 0 ? 10 + i : 90 - i;
    await new Promise((done) => setTimeout(done, 2)); // a later calculatedAt than the previous trial
    await postScore(product, value);
    const t0 = performance.now();
    await until(
      async () => ((await readScore(product.readApis[0]!, credential)).body as { score?: number } | undefined)?.score === value,
      10_000,
    );
    samples.push(performance.now() - t0);
  }
  return samples;
}

/** A new credential whose organization has a score, once the (first) read API serves it. */
async function servedCredential(product: Product): Promise<{ clientId: string; apiKey: string }> {
  const credential = await createCredential(product);
  await postScore(product, 72);
  await until(async () => (await readScore(product.readApis[0]!, credential)).status === 200, 30_000);
  return credential;
}

/** Decision 52's rows: ingest to readable on both replicas of a distributed product, at each of INGEST_RATES. */
async function ingestRateRows(distributed: Product): Promise<Latencies[]> {
  const target = { ...distributed, secret: SECRET, run: randomUUID().slice(0, 8) };
  const grants = await ingestGrants(target);
  const rows: Latencies[] = [];
  for (const rate of INGEST_RATES) {
    const figures = await ingestAtRate(target, grants, rate, INGEST_SECONDS);
    const batch = percentiles('', figures.batchMs);
    rows.push(
      percentiles(
        `score ingested → readable on both replicas at ${rate} scores/s, distributed (${figures.achieved.toFixed(0)}/s acknowledged, ` +
          `${figures.everyReplica.length} samples, ${figures.unseen} unseen after 10 s; batch 202 p50 ${batch.p50.toFixed(0)} ms)`,
        figures.everyReplica,
      ),
    );
  }
  return rows;
}

/**
 * Decision 52's other rows: webhook deliveries per second with one, two and three notifier replicas,
 * on a distributed stack of their own (bench/src/notifier-scale.ts), each with the ratio to one replica.
 */
async function notifierScaleRows(): Promise<string[]> {
  const engines = enginesFromEnv();
  if (!engines) throw new Error('notifier replicas: set KAFKA_BROKERS, MONGO_URL and REDIS_URL');
  const { heading, figures } = await measureNotifierScale(NOTIFIER_SCALE_DEFAULTS, engines, (line) => process.stderr.write(`${line}\n`));
  return [...heading, '', notifierScaleTable(figures), ''];
}

async function main(): Promise<void> {
  // One comparison alone, its table on stdout.
  const alone = { portfolio: portfolioComparison, certificate: certificateComparison }[process.env.BENCH_ONLY ?? ''];
  if (alone) {
    const { rows, summary } = await alone();
    const lines = rows.map((row) => `| ${row.name} | ${row.rps.toFixed(0)} | ${row.p50} | ${row.p99} | ${row.non2xx} |`);
    process.stdout.write(
      `\n| target | requests/s | p50 ms | p99 ms | non-2xx |\n|---|---:|---:|---:|---:|\n${lines.join('\n')}\n\n${summary}\n`,
    );
    return;
  }
  if (process.env.BENCH_ONLY === 'engines') {
    await writeResults(enginesTable(await enginesComparison()).join('\n'));
    return;
  }
  if (process.env.BENCH_ONLY === 'ingest-rate') {
    const distributed = await startDistributed(2);
    try {
      // The baseline, as in the full run: one score at a time, timed until the first replica serves it.
      const credential = await servedCredential(distributed);
      const rows = [
        percentiles('score ingested → readable, distributed, one at a time (the baseline)', await ingestLatency(distributed, credential)),
        ...(await ingestRateRows(distributed)),
      ];
      await writeResults(
        [
          `Ingest to readable at a rate (decision 52): ${INGEST_SECONDS} s per rate, two read-API replicas, node ${process.version}, ` +
            `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
          '',
          '| measurement | p50 ms | p99 ms | max ms |',
          '|---|---:|---:|---:|',
          ...rows.map((l) => `| ${l.name} | ${l.p50.toFixed(1)} | ${l.p99.toFixed(1)} | ${l.max.toFixed(1)} |`),
        ].join('\n'),
      );
    } finally {
      await distributed.stop();
    }
    return;
  }
  if (process.env.BENCH_ONLY === 'notifier-scale') {
    await writeResults((await notifierScaleRows()).join('\n'));
    return;
  }
  if (process.env.BENCH_ONLY === 'fresh-processes') {
    await writeResults(freshProcessesTable(await freshProcesses()).join('\n'));
    return;
  }
  const readPath = readPathTable(await readPathInTurns());
  if (process.env.BENCH_ONLY === 'read-path') {
    await writeResults(readPath.join('\n'));
    return;
  }
  const throughput: Throughput[] = [];
  const latencies: Latencies[] = [];
  const history: Throughput[] = [];
  const notifierReplicas: string[] = [];

  const baseline = await startNode('bench/dist/bare-express.js', ['0'], {}, (line) => line.msg === 'baseline ready');
  throughput.push(
    await load(
      'bare express, constant JSON (baseline)',
      `http://127.0.0.1:${String(baseline.ready.port)}/v1/customers/rs_BENCHMARKBASELINE00000000/score`,
    ),
  );
  await baseline.stop();

  const dataDir = await mkdtemp(join(tmpdir(), 'rsd-bench-'));
  const embedded = await startEmbedded(dataDir);
  try {
    const credential = await createCredential(embedded);
    await postScore(embedded, 72);
    throughput.push(
      await load('read API /score, embedded', `${embedded.readApis[0]!}/v1/customers/${credential.clientId}/score`, {
        'x-api-key': credential.apiKey,
      }),
    );
    latencies.push(percentiles('revocation → enforced, embedded', await revocationLatency(embedded)));
    latencies.push(percentiles('score ingested → readable, embedded', await ingestLatency(embedded, credential)));
    history.push(...(await historyRows(embedded)));
  } finally {
    await embedded.stop();
    await rm(dataDir, { recursive: true, force: true });
  }

  const accessLog = await accessLogComparison();
  throughput.push(...accessLog.rows);
  const signing = await signingComparison();
  throughput.push(...signing.rows);
  const portfolio = await portfolioComparison();
  throughput.push(...portfolio.rows);
  const certificate = await certificateComparison();
  throughput.push(...certificate.rows);

  // Decision 24's cost: the same /score with every response signed afresh instead of an unchanged
  // representation's signature reused (the default), on a product of its own.
  const signingDir = await mkdtemp(join(tmpdir(), 'rsd-bench-signing-'));
  const signingEvery = await startEmbedded(signingDir, { RESPONSE_SIGNATURE_REUSE_S: '0' });
  try {
    const credential = await createCredential(signingEvery);
    await postScore(signingEvery, 72);
    throughput.push(
      await load(
        'read API /score, embedded, every response signed (RESPONSE_SIGNATURE_REUSE_S=0)',
        `${signingEvery.readApis[0]!}/v1/customers/${credential.clientId}/score`,
        { 'x-api-key': credential.apiKey },
      ),
    );
  } finally {
    await signingEvery.stop();
    await rm(signingDir, { recursive: true, force: true });
  }

  if (process.env.KAFKA_BROKERS && process.env.MONGO_URL && process.env.REDIS_URL) {
    const distributed = await startDistributed(2);
    try {
      const credential = await servedCredential(distributed);
      throughput.push(
        await load(
          'read API /score, distributed (1 of 2 replicas)',
          `${distributed.readApis[0]!}/v1/customers/${credential.clientId}/score`,
          { 'x-api-key': credential.apiKey },
        ),
      );
      latencies.push(percentiles('revocation → enforced on both replicas, distributed', await revocationLatency(distributed)));
      latencies.push(percentiles('score ingested → readable, distributed', await ingestLatency(distributed, credential)));
      latencies.push(...(await ingestRateRows(distributed)));
    } finally {
      await distributed.stop();
    }
    notifierReplicas.push(...(await notifierScaleRows()));
  } else {
    process.stdout.write('Distributed rows skipped: set KAFKA_BROKERS, MONGO_URL and REDIS_URL (eval "$(scripts/infra.sh up)").\n');
  }

  const base = throughput[0]!.rps;
  const lines = [
    ...readPath,
    `Read API throughput (${CONNECTIONS} connections, ${DURATION_S} s, node ${process.version}, ${new Date().toISOString().slice(0, 10)})`,
    '',
    '| target | requests/s | ratio to baseline | p50 ms | p99 ms | non-2xx |',
    '|---|---:|---:|---:|---:|---:|',
    ...throughput.map((t) => `| ${t.name} | ${t.rps.toFixed(0)} | ${(t.rps / base).toFixed(2)}× | ${t.p50} | ${t.p99} | ${t.non2xx} |`),
    '',
    accessLog.summary,
    '',
    signing.summary,
    '',
    portfolio.summary,
    '',
    certificate.summary,
    '',
    `Read API /score/history on the embedded runtime over ${HISTORY_DAYS} daily scores, pillars and explanations included (${DURATION_S} s; goal: p99 ≤ 20 ms)`,
    '',
    '| target | requests/s | p50 ms | p99 ms | non-2xx |',
    '|---|---:|---:|---:|---:|',
    ...history.map((t) => `| ${t.name} | ${t.rps.toFixed(0)} | ${t.p50} | ${t.p99} | ${t.non2xx} |`),
    '',
    `Latencies (${TRIALS} trials each, or the samples named)`,
    '',
    '| measurement | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|',
    ...latencies.map((l) => `| ${l.name} | ${l.p50.toFixed(1)} | ${l.p99.toFixed(1)} | ${l.max.toFixed(1)} |`),
    '',
    ...notifierReplicas,
  ];
  await writeResults(lines.join('\n'));
}

/** The table on stdout and in bench/results/latest.md, where the README says to find it. */
async function writeResults(table: string): Promise<void> {
  process.stdout.write(`\n${table}\n`);
  await mkdir(join(ROOT, 'bench/results'), { recursive: true });
  await writeFile(join(ROOT, 'bench/results/latest.md'), table);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
