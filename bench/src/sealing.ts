import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { TOPICS } from '@rsd/contracts';
import { ingestAtRate, ingestGrants, type Grant } from './ingest-rate';
import { EPHEMERAL_PORTS, ownSession, ROOT, startNode, type Started } from './processes';

// `BENCH_UNSEALED=<a checkout, built, whose log writes events in clear> npm run bench:sealing`: what decision 56's
// sealed event log costs on the embedded runtime, this build (sealed) against that one, in alternating turns on the
// same machine at the same time, each on an embedded product of its own:
//  - ingest: scores at INGEST_RATE a second for INGEST_SECONDS (decision 52's row, `ingest-rate.ts`): a batch's 202
//    (on the embedded runtime it answers once the views hold the batch: each score sealed, appended, opened and
//    projected) and from the 202 until the read API serves the sampled score;
//  - projection: `rebuild-views` of the whole log into a new namespace (every record opened, then projected): events/s;
//  - reads: GET /score under CONNECTIONS connections for READ_SECONDS after a warm-up (the views are in clear: the
//    read path is not sealed, so this row is the control), requests/s and the server's CPU per request.
// ROUNDS rounds a run, each side once a round, the order reversed every other round; a run's figure is the median of
// its rounds; RUNS runs, each on new products; the table gives the median of the runs and their range, and the ratio.

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const INGEST_RATE = Number(process.env.BENCH_INGEST_RATE ?? 1_000);
const INGEST_SECONDS = Number(process.env.BENCH_INGEST_SECONDS ?? 8);
const READ_SECONDS = Number(process.env.BENCH_READ_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECRET = randomBytes(32).toString('base64url');
const run = promisify(execFile);

/** One side's product: the build it runs, its data directory, the grants the ingest rows feed. */
interface Side {
  name: string;
  build: string;
  dir: string;
  product: Started;
  urls: { readApi: string; credentials: string; scoreIngest: string };
  grants: Grant[];
  reader: { clientId: string; apiKey: string };
}

/** One side's figures for one turn. */
interface Turn {
  batchP50: number;
  readableP50: number;
  achieved: number;
  rebuildEventsPerS: number;
  readRps: number;
  readP99: number;
  readCpuUs: number;
}

const METRICS: { key: keyof Turn; label: string; digits: number }[] = [
  { key: 'batchP50', label: `ingest at ${INGEST_RATE}/s: batch sent → 202, p50 ms (views hold it)`, digits: 1 },
  { key: 'readableP50', label: `ingest at ${INGEST_RATE}/s: 202 → readable on /score, p50 ms`, digits: 1 },
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
const p50 = (samples: number[]) => (samples.length === 0 ? NaN : median(samples));

async function startSide(name: string, build: string): Promise<Side> {
  const dir = await mkdtemp(join(tmpdir(), `rsd-bench-sealing-${name}-`));
  const product = await startNode(
    join(build, 'services/embedded/dist/main.js'),
    [],
    {
      JWT_HS256_SECRET: SECRET,
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '1000000000',
      FAILED_AUTH_LIMIT_PER_MINUTE: '1000000000',
      ACCOUNT_RATE_LIMIT_PER_MINUTE: '1000000000',
      DATA_DIR: dir,
      ...EPHEMERAL_PORTS,
    },
    (line) => line.msg === 'embedded runtime ready',
    { detached: ownSession('product') },
  );
  const urls = {
    readApi: String(product.ready.readApi),
    credentials: String(product.ready.credentials),
    scoreIngest: String(product.ready.scoreIngest),
  };
  const target = { ...urls, readApis: [urls.readApi], secret: SECRET, run: `${name}-${randomUUID().slice(0, 8)}` };
  const grants = await ingestGrants(target);
  return { name, build, dir, product, urls, grants, reader: grants[0]! };
}

async function stopSide(side: Side): Promise<void> {
  await side.product.stop();
  await rm(side.dir, { recursive: true, force: true });
}

/** User plus system CPU time of a process so far, in ms (Linux). */
async function cpuMs(pid: number | undefined): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The records of the topics the read API's projection reads, and how many of them are sealed. */
function logRecords(dir: string): { events: number; sealed: number } {
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

async function turn(side: Side, index: string): Promise<Turn> {
  const target = { ...side.urls, readApis: [side.urls.readApi], secret: SECRET, run: side.name };
  const ingest = await ingestAtRate(target, side.grants, INGEST_RATE, INGEST_SECONDS);
  if (ingest.unseen > 0) process.stderr.write(`${side.name}: ${ingest.unseen} samples unseen after 10 s\n`);

  // The whole log replayed into a new namespace by the side's own rebuild task, as an operator runs it, while the product idles.
  const { events } = logRecords(side.dir);
  const rebuilt = await run(
    process.execPath,
    [join(side.build, 'services/read-api/dist/rebuild-views/main.js'), '--into', `rebuild_${index}`],
    {
      cwd: side.build,
      env: { ...process.env, RUNTIME: 'embedded', DATA_DIR: side.dir, LOG_LEVEL: 'warn' },
    },
  );
  const { seconds } = JSON.parse(rebuilt.stdout.trim().split('\n').pop()!) as { seconds: number };

  const url = `${side.urls.readApi}/v1/customers/${side.reader.clientId}/score`;
  const headers = { 'x-api-key': side.reader.apiKey };
  await autocannon({ url, headers, connections: CONNECTIONS, duration: 2 });
  const before = await cpuMs(side.product.child.pid);
  const reads = await autocannon({ url, headers, connections: CONNECTIONS, duration: READ_SECONDS });
  const cpu = (await cpuMs(side.product.child.pid)) - before;
  if (reads.non2xx > 0) throw new Error(`${side.name}: ${reads.non2xx} reads were not 2xx`);
  return {
    batchP50: p50(ingest.batchMs),
    readableP50: p50(ingest.everyReplica),
    achieved: ingest.achieved,
    rebuildEventsPerS: events / seconds,
    readRps: reads.requests.average,
    readP99: reads.latency.p99,
    readCpuUs: (cpu * 1000) / reads.requests.total,
  };
}

interface RunFigures {
  medians: [Turn, Turn];
  logs: { events: number; sealed: number }[];
}

/** One run: two new products, ROUNDS rounds in turns; each side's median round, and what its log holds. */
async function oneRun(runIndex: number, unsealedBuild: string): Promise<RunFigures> {
  const sides = [await startSide('sealed', ROOT), await startSide('unsealed', unsealedBuild)];
  try {
    const turns: Turn[][] = [[], []];
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const which of round % 2 === 0 ? [0, 1] : [1, 0]) {
        turns[which]!.push(await turn(sides[which]!, `${runIndex}_${round}`));
        process.stderr.write(`run ${runIndex + 1} round ${round + 1}: ${sides[which]!.name} ${JSON.stringify(turns[which]!.at(-1))}\n`);
      }
    }
    const medians = turns.map(
      (side) => Object.fromEntries(METRICS.map(({ key }) => [key, median(side.map((t) => t[key]))])) as unknown as Turn,
    );
    return { medians: medians as [Turn, Turn], logs: sides.map((side) => logRecords(side.dir)) };
  } finally {
    for (const side of sides) await stopSide(side);
  }
}

const range = (values: number[], digits: number) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;

async function main(): Promise<void> {
  const unsealed = process.env.BENCH_UNSEALED;
  if (!unsealed)
    throw new Error(
      'BENCH_UNSEALED: the path of a built checkout whose event log is written in clear (docs/decisions/0056-erasure-and-offboarding.md says how it was made)',
    );
  const runs: RunFigures[] = [];
  for (let index = 0; index < RUNS; index += 1) runs.push(await oneRun(index, resolve(unsealed)));

  const lines = [
    `Sealed event log (this build) against unsealed (${unsealed}), embedded runtime, node ${process.version}, ` +
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
    '',
  ];
  process.stdout.write(`\n${lines.join('\n')}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:sealing failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
