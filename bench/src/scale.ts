import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { optionsOrExit } from './command-line';
import { ROOT } from './processes';
import { cleanUpOnExit } from './scale/cleanup';
import { describe, formatCount, shapeOf, type DataSetShape } from './scale/data-set-shape';
import { measureDataSet, type Column } from './scale/measure-data-set';
import { PRODUCT_MAIN, parseOptions, USAGE } from './scale/options';
import { machine } from './scale/proc-stats';
import { table } from './scale/report';

// `npm run bench:scale`: the embedded runtime on data sets of growing size. The bench talks to the
// product only through a data directory in today's layout (events.ndjson and authorizations.json,
// made with the product's own create use case and score events) and over HTTP, so it measures the
// file storage and the SQLite storage that replaces it alike; on the new storage the first start
// includes the one-time import. Load and product share this machine's cores, as in `npm run bench`.

const SECRET = randomBytes(32).toString('base64url');

/** As run.ts's benchEnv: the per-credential limit (120/min) would stop the load at once; everything else as shipped. */
const PRODUCT_ENV = {
  JWT_HS256_SECRET: SECRET,
  LOG_LEVEL: 'info',
  RATE_LIMIT_PER_MINUTE: '1000000000',
  FAILED_AUTH_LIMIT_PER_MINUTE: '1000000000',
};

async function main(): Promise<void> {
  const options = optionsOrExit(USAGE, parseOptions);
  cleanUpOnExit();
  const now = new Date();
  const largest = options.sizes.at(-1)!;
  let shapes: DataSetShape[];
  try {
    shapes = options.sizes.map((size) => shapeOf(size));
    if (options.events !== undefined && options.events !== largest) shapes.push(shapeOf(largest, options.events));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }

  const heading = [
    `Scale benchmark (issue 7): the embedded runtime on data sets in today's layout`,
    `${await machine()}; node ${process.version}; ${now.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    `Product: ${join(options.productRoot, PRODUCT_MAIN)}`,
    '',
    ...shapes.map((shape) => `- ${shape.name}: ${describe(shape)}`),
  ].join('\n');
  process.stderr.write(`${heading}\n\n`);

  const columns: Column[] = [];
  for (const shape of shapes) {
    columns.push(
      await measureDataSet(shape, {
        productRoot: options.productRoot,
        env: PRODUCT_ENV,
        secret: SECRET,
        startTimeoutMs: options.startTimeoutMs,
        createBudgetMs: options.createBudgetMs,
        now,
      }),
    );
  }

  const notes = columns.flatMap((column) => column.notes.map((note) => `- ${column.shape.name}: ${note}`));
  const events = options.events !== undefined ? columns.find((column) => column.shape.scoreEvents === options.events) : undefined;
  const report = [
    heading,
    '',
    table(columns),
    '',
    ...(events ? [eventsCheck(events), ''] : []),
    ...(notes.length > 0 ? ['Notes:', ...notes, ''] : []),
    LEGEND,
  ].join('\n');
  process.stdout.write(`\n${report}\n`);
  await mkdir(join(ROOT, 'bench/results'), { recursive: true });
  await writeFile(join(ROOT, 'bench/results/scale-latest.md'), `${report}\n`);
}

/** The goal "a 10M-event data set starts and serves": a first start that ends ready, and every reader served. */
function eventsCheck(column: Column): string {
  const { firstStartS, served, readers } = column.figures;
  const ok = firstStartS !== undefined && served !== undefined && served === readers;
  return (
    `${formatCount(column.shape.scoreEvents)}-event data set starts and serves: ${ok ? 'yes' : '**no**'}` +
    (firstStartS !== undefined ? ` (first start ${firstStartS.toFixed(1)} s, ${served ?? 0}/${readers ?? '?'} readers served)` : '')
  );
}

const LEGEND = `What the figures are: build = making the data set with the product's create use case and score
events and writing both files (synced). First start = spawn of services/embedded/dist/main.js to its
'embedded runtime ready' line on the new data directory (the import row: the seconds the storage's own
'imported a file …' log lines give, where it logs them); start-up = the same after a SIGTERM stop.
RSS = VmRSS 2 s after start-up; idle CPU = utime+stime over the next 10 s without requests. Creates =
POST …/authorizations with a real token, four in flight (1,000, or as many as the budget allows; their
four connections opened first), while one keep-alive connection reads /score back to back, from a
client process of its own; the stall is its slowest answer meanwhile; measured
again right after 200,000 scores were posted in batches of 1,000, while the views take them in.
/score = autocannon, 32 connections, 10 s after 2 s of warm-up, cycling over 8 readers spread over the
data set. Ingest = autocannon POST /v1/scores for 5 s after 1 s of warm-up, today's scores of the data
set's organizations (a scoring engine's token); batches on one connection, as \`rsd scores publish\` posts
them; limits as shipped (2 MB body, 1,000 per batch).`;

main().catch((error: unknown) => {
  process.stderr.write(`bench:scale failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
