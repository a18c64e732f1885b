import { execFile, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { Kafka, logLevel } from 'kafkajs';
import { TOPICS } from '@rsd/contracts';
import { startDistributedProduct, startEmbeddedProduct, type Product } from './bench-products';
import { INFRA_SCRIPT, infraConnectionEnv, infraShellEnv, runInfraScript, type InfraInstance } from './infra-script';
import { ingestAtRate, ingestGrants, type Grant } from './ingest-rate';
import { ROOT } from './processes';

// `BENCH_UNSEALED=<a checkout, built, whose log writes events in clear> npm run bench:sealing`: what decision 56's
// sealed event log costs, this build (sealed) against that one, in alternating turns on the same machine at the same
// time, each on a product of its own. BENCH_RUNTIME=embedded (the default): an embedded product each;
// BENCH_RUNTIME=distributed: a distributed stack each (credentials, score ingest, two read-API replicas, the key store
// in MongoDB), each on a Kafka, FerretDB and Redis of its own (scripts/infra.sh, its own INFRA_DIR and ports, started
// and taken down by the bench for every run), so that neither side's views replay the other's topics.
//  - ingest: scores at INGEST_RATE a second for INGEST_SECONDS (decision 52's row, `ingest-rate.ts`): a batch's 202
//    (embedded: it answers once the views hold the batch, each score sealed, appended, opened and projected;
//    distributed: once the batch is in Kafka, each score sealed) and from the 202 until every read-API replica serves
//    the sampled score;
//  - projection: `rebuild-views` of the whole log into a new namespace or database (every record opened, then
//    projected): events/s;
//  - reads: GET /score under CONNECTIONS connections for READ_SECONDS after a warm-up (the views are in clear: the
//    read path is not sealed, so this row is the control), requests/s and the (first) read API's CPU per request.
// ROUNDS rounds a run, each side once a round, the order reversed every other round; a run's figure is the median of
// its rounds; RUNS runs, each on new products (and new servers); the table gives the median of the runs and their
// range, and the ratio.

const RUNTIME = process.env.BENCH_RUNTIME ?? 'embedded';
const DISTRIBUTED = RUNTIME === 'distributed';
// Distributed: 100 scores a second, which both stacks keep up with on two shared cores (at 1 000 they queue), and
// shorter turns, so that three runs with their servers' start fit the heavy slot (about 10 minutes).
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (DISTRIBUTED ? 3 : 4));
const INGEST_RATE = Number(process.env.BENCH_INGEST_RATE ?? (DISTRIBUTED ? 100 : 1_000));
const INGEST_SECONDS = Number(process.env.BENCH_INGEST_SECONDS ?? (DISTRIBUTED ? 5 : 8));
const READ_SECONDS = Number(process.env.BENCH_READ_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECRET = randomBytes(32).toString('base64url');
const run = promisify(execFile);

/** The projection's records: how many the log holds, and how many of them are sealed. */
interface LogRecords {
  events: number;
  sealed: number;
}

/** One side's product, what the ingest rows feed, and what its runtime keeps apart. */
interface Side {
  name: string;
  build: string;
  product: Product;
  grants: Grant[];
  reader: Grant;
  /** Sampled scores some replica had not served 10 s after their 202, over the run (left out of the latencies). */
  unseen: number;
  /** How many records the projection's topics hold (cheap: read before every rebuild). */
  events(): Promise<number>;
  /** Every record of the projection's topics read, the sealed ones counted. */
  records(): Promise<LogRecords>;
  /** The environment `rebuild-views` runs in, beside the product. */
  rebuildEnv: Record<string, string>;
  stop(): Promise<void>;
}

/** One side's figures for one turn. */
interface Turn {
  batchP50: number;
  readableP50: number;
  readableP99: number;
  achieved: number;
  rebuildEventsPerS: number;
  readRps: number;
  readP99: number;
  readCpuUs: number;
}

/**
 * Scores ingested at the rate, unmeasured, before a run's first round: a new stack's first seconds hold four processes'
 * compiling, its consumer groups' joins and every subject's first key, which would otherwise land in the first round.
 * Distributed only by default, so the embedded figures reproduce as they were measured.
 */
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? (DISTRIBUTED ? 5 : 0));
const READABLE = DISTRIBUTED ? 'readable on both read-API replicas' : 'readable on /score';
const METRICS: { key: keyof Turn; label: string; digits: number }[] = [
  {
    key: 'batchP50',
    label: `ingest at ${INGEST_RATE}/s: batch sent → 202, p50 ms (${DISTRIBUTED ? 'in Kafka' : 'views hold it'})`,
    digits: 1,
  },
  { key: 'readableP50', label: `ingest at ${INGEST_RATE}/s: 202 → ${READABLE}, p50 ms`, digits: 1 },
  { key: 'readableP99', label: `ingest at ${INGEST_RATE}/s: 202 → ${READABLE}, p99 ms`, digits: 1 },
  { key: 'achieved', label: `ingest at ${INGEST_RATE}/s: scores acknowledged/s`, digits: 0 },
  { key: 'rebuildEventsPerS', label: 'projection (rebuild-views of the whole log): events/s', digits: 0 },
  { key: 'readRps', label: `GET /score, ${CONNECTIONS} connections: requests/s`, digits: 0 },
  { key: 'readP99', label: 'GET /score: p99 ms', digits: 0 },
  { key: 'readCpuUs', label: 'GET /score: server CPU µs/request', digits: 1 },
];

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
/** Nearest rank; NaN for no samples (a turn whose every sample went unseen). */
const percentile = (samples: number[], q: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};

/** The grants of a new product, and the first as the reader the read row loads. */
async function fed(name: string, product: Product): Promise<{ grants: Grant[]; reader: Grant; unseen: number }> {
  const target = { ...product, secret: SECRET, run: `${name}-${randomUUID().slice(0, 8)}` };
  const grants = await ingestGrants(target);
  return { grants, reader: grants[0]!, unseen: 0 };
}

async function startEmbeddedSide(name: string, build: string): Promise<Side> {
  const dir = await mkdtemp(join(tmpdir(), `rsd-bench-sealing-${name}-`));
  const product = await startEmbeddedProduct(SECRET, dir, {}, build);
  return {
    name,
    build,
    product,
    ...(await fed(name, product)),
    events: () => Promise.resolve(sqliteRecords(dir).events),
    records: () => Promise.resolve(sqliteRecords(dir)),
    rebuildEnv: { RUNTIME: 'embedded', DATA_DIR: dir },
    stop: async () => {
      await product.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The records of the topics the read API's projection reads, and how many of them are sealed. */
function sqliteRecords(dir: string): LogRecords {
  const db = new DatabaseSync(join(dir, 'rsd.sqlite'), { readOnly: true });
  try {
    const row = db
      .prepare(`SELECT COUNT(*) AS events, SUM(value LIKE '%"rsdsealed":%') AS sealed FROM events WHERE topic IN (?, ?)`)
      .get(TOPICS.authorizations, TOPICS.scores)!;
    return { events: Number(row.events), sealed: Number(row.sealed ?? 0) };
  } finally {
    db.close();
  }
}

/**
 * Each side's servers, clear of the shared instance's ports (19092, 27018, 16379), the soak's and the engines
 * comparison's; the stacks' own ports (read API, replicas 10 apart, credentials, score ingest) from `stack`.
 */
const SIDE_PORTS = [
  { infra: { KAFKA_PORT: 29192, KAFKA_CONTROLLER_PORT: 29193, MONGO_PORT: 28118, REDIS_PORT: 26479 }, stack: 18680 },
  { infra: { KAFKA_PORT: 29292, KAFKA_CONTROLLER_PORT: 29293, MONGO_PORT: 28218, REDIS_PORT: 26579 }, stack: 18780 },
];
/** The instances up now: taken down on Ctrl-C, which leaves no time for the stacks' own stop. */
const upNow = new Set<InfraInstance>();
const quiet = () => undefined;

async function startDistributedSide(name: string, build: string, index: number): Promise<Side> {
  const ports = SIDE_PORTS[index]!;
  const instance: InfraInstance = { dir: await mkdtemp(join(tmpdir(), `rsd-bench-sealing-${name}-`)), ports: ports.infra };
  // The script runs PostgreSQL as the user postgres when run as root: it must reach the directory.
  await chmod(instance.dir, 0o755);
  const down = async () => {
    await runInfraScript(instance, 'down', [], quiet);
    upNow.delete(instance);
    await rm(instance.dir, { recursive: true, force: true });
  };
  upNow.add(instance);
  let product: Product | undefined;
  try {
    await runInfraScript(instance, 'up', [], quiet);
    const engines = infraConnectionEnv(instance);
    product = await startDistributedProduct(SECRET, 2, build, ports.stack, engines);
    const stack = product;
    const topics = topicRecords(engines.KAFKA_BROKERS);
    return {
      name,
      build,
      product,
      ...(await fed(name, product)),
      events: topics.events,
      records: topics.records,
      rebuildEnv: product.env!,
      stop: async () => {
        await stack.stop();
        await down();
      },
    };
  } catch (error) {
    await product?.stop();
    await down();
    throw error;
  }
}

/** The projection's topics in a side's own Kafka: their records counted by offsets, or read and the sealed ones counted. */
function topicRecords(brokers: string): { events: () => Promise<number>; records: () => Promise<LogRecords> } {
  const kafka = new Kafka({ brokers: [brokers], clientId: 'bench-sealing', logLevel: logLevel.NOTHING });
  const topics = [TOPICS.authorizations, TOPICS.scores];
  const events = async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const offsets = (await Promise.all(topics.map((topic) => admin.fetchTopicOffsets(topic)))).flat();
      return offsets.reduce((sum, { high, low }) => sum + Number(high) - Number(low), 0);
    } finally {
      await admin.disconnect();
    }
  };
  const records = async () => {
    const expected = await events();
    const consumer = kafka.consumer({ groupId: `bench-sealing-${randomUUID()}` });
    await consumer.connect();
    const counted = { events: 0, sealed: 0 };
    try {
      await consumer.subscribe({ topics, fromBeginning: true });
      await new Promise<void>((done) => {
        void consumer.run({
          eachMessage: ({ message }) => {
            counted.events += 1;
            if (message.value?.toString().includes('"rsdsealed":')) counted.sealed += 1;
            if (counted.events >= expected) done();
            return Promise.resolve();
          },
        });
      });
    } finally {
      await consumer.disconnect();
    }
    return counted;
  };
  return { events, records };
}

async function startSide(name: string, build: string, index: number): Promise<Side> {
  return DISTRIBUTED ? startDistributedSide(name, build, index) : startEmbeddedSide(name, build);
}

/** User plus system CPU time of a process so far, in ms (Linux). */
async function cpuMs(pid: number | undefined): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** A side's scores at INGEST_RATE for `seconds`, each organization's a day later than its last. */
const ingest = (side: Side, seconds: number) =>
  ingestAtRate({ ...side.product, secret: SECRET, run: side.name }, side.grants, INGEST_RATE, seconds);

async function turn(side: Side, index: string): Promise<Turn> {
  const ingested = await ingest(side, INGEST_SECONDS);
  if (ingested.unseen > 0) process.stderr.write(`${side.name}: ${ingested.unseen} samples unseen after 10 s\n`);
  side.unseen += ingested.unseen;

  // The whole log replayed into a new namespace by the side's own rebuild task, as an operator runs it, while the product idles.
  const events = await side.events();
  const rebuilt = await run(
    process.execPath,
    [join(side.build, 'services/read-api/dist/rebuild-views/main.js'), '--into', `rebuild_${index}`],
    { cwd: side.build, env: { ...process.env, ...side.rebuildEnv, LOG_LEVEL: 'warn' } },
  );
  const { seconds } = JSON.parse(rebuilt.stdout.trim().split('\n').pop()!) as { seconds: number };

  const url = `${side.product.readApis[0]}/v1/customers/${side.reader.clientId}/score`;
  const headers = { 'x-api-key': side.reader.apiKey };
  await autocannon({ url, headers, connections: CONNECTIONS, duration: 2 });
  const before = await cpuMs(side.product.pid);
  const reads = await autocannon({ url, headers, connections: CONNECTIONS, duration: READ_SECONDS });
  const cpu = (await cpuMs(side.product.pid)) - before;
  if (reads.non2xx > 0) throw new Error(`${side.name}: ${reads.non2xx} reads were not 2xx`);
  return {
    batchP50: percentile(ingested.batchMs, 0.5),
    readableP50: percentile(ingested.everyReplica, 0.5),
    readableP99: percentile(ingested.everyReplica, 0.99),
    achieved: ingested.achieved,
    rebuildEventsPerS: events / seconds,
    readRps: reads.requests.average,
    readP99: reads.latency.p99,
    readCpuUs: (cpu * 1000) / reads.requests.total,
  };
}

interface RunFigures {
  medians: [Turn, Turn];
  logs: LogRecords[];
  unseen: number[];
}

/** One run: two new products, ROUNDS rounds in turns; each side's median round, and what its log holds. */
async function oneRun(runIndex: number, unsealedBuild: string, loads: number[]): Promise<RunFigures> {
  const sides: Side[] = [];
  try {
    sides.push(await startSide('sealed', ROOT, 0));
    sides.push(await startSide('unsealed', unsealedBuild, 1));
    if (WARM_UP_SECONDS > 0) for (const side of sides) await ingest(side, WARM_UP_SECONDS);
    const turns: Turn[][] = [[], []];
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const which of round % 2 === 0 ? [0, 1] : [1, 0]) {
        turns[which]!.push(await turn(sides[which]!, `${runIndex}_${round}`));
        process.stderr.write(
          `run ${runIndex + 1} round ${round + 1}: ${sides[which]!.name} ${JSON.stringify(turns[which]!.at(-1))} load ${loadavg()[0]!.toFixed(1)}\n`,
        );
        loads.push(loadavg()[0]!);
      }
    }
    const medians = turns.map(
      (side) => Object.fromEntries(METRICS.map(({ key }) => [key, median(side.map((t) => t[key]))])) as unknown as Turn,
    );
    const logs: LogRecords[] = [];
    for (const side of sides) logs.push(await side.records());
    return { medians: medians as [Turn, Turn], logs, unseen: sides.map((side) => side.unseen) };
  } finally {
    for (const side of sides) await side.stop();
  }
}

/** Ctrl-C: the servers the bench started are taken down (the stacks' processes are in its process group, and go with it). */
function downOnSignal(): void {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: taking the bench's own servers down\n`);
      for (const instance of upNow) spawnSync('bash', [INFRA_SCRIPT, 'down'], { env: infraShellEnv(instance), stdio: 'inherit' });
      process.exit(code);
    });
}

const range = (values: number[], digits: number) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;

async function main(): Promise<void> {
  const unsealed = process.env.BENCH_UNSEALED;
  if (!unsealed)
    throw new Error(
      'BENCH_UNSEALED: the path of a built checkout whose event log is written in clear (docs/decisions/0056-erasure-and-offboarding.md says how it was made)',
    );
  if (RUNTIME !== 'embedded' && !DISTRIBUTED) throw new Error(`BENCH_RUNTIME: embedded (the default) or distributed, not ${RUNTIME}`);
  if (DISTRIBUTED) downOnSignal();
  const runs: RunFigures[] = [];
  // The machine's load average after each turn: how busy the shared cores were (both sides alike, in turns).
  const loads: number[] = [];
  for (let index = 0; index < RUNS; index += 1) runs.push(await oneRun(index, resolve(unsealed), loads));

  const lines = [
    `Sealed event log (this build) against unsealed (${unsealed}), ${RUNTIME} runtime, node ${process.version}, ` +
      `${new Date().toISOString().slice(0, 16)}Z: ${RUNS} runs of ${ROUNDS} rounds in turns; each run's figure is its median round, ` +
      'the table the median of the runs (min–max); ratio = sealed / unsealed, per run.',
    '',
    '| measurement | sealed | unsealed | ratio |',
    '|---|---:|---:|---:|',
    ...METRICS.map(({ key, label, digits }) => {
      const sealed = runs.map((r) => r.medians[0][key]);
      const clear = runs.map((r) => r.medians[1][key]);
      return `| ${label} | ${range(sealed, digits)} | ${range(clear, digits)} | ${range(
        sealed.map((value, i) => value / clear[i]!),
        2,
      )} |`;
    }),
    '',
    `Records in the projection's topics at each run's end, sealed of them: sealed side ${runs.map((r) => `${r.logs[0]!.sealed}/${r.logs[0]!.events}`).join(', ')}; ` +
      `unsealed side ${runs.map((r) => `${r.logs[1]!.sealed}/${r.logs[1]!.events}`).join(', ')}.`,
    `Samples unseen 10 s after their 202 (left out of the latencies), per run: sealed ${runs.map((r) => r.unseen[0]).join(', ')}; ` +
      `unsealed ${runs.map((r) => r.unseen[1]).join(', ')}. The machine's load average (1 min) after each turn: ${range(loads, 1)}.`,
    '',
  ];
  process.stdout.write(`\n${lines.join('\n')}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:sealing failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
