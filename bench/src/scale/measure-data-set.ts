import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signDevToken } from '@rsd/platform';
import { buildDataSet, type Reader } from './build-data-set';
import { removeDirectory, trackDirectory } from './cleanup';
import { CREATES, createsWhileReadingApart } from './create-stall';
import { describe, type DataSetShape } from './data-set-shape';
import { ingestLoad, scoreLoad } from './http-load';
import { idleFigures } from './idle';
import { BATCH_SIZE, batchBodies, singleScoreBodies } from './ingest-bodies';
import { bytesUnder } from './proc-stats';
import { startProduct, type RunningProduct } from './product';

/** The create-stall scenario: this many scores posted in batches just before the second round of creates. */
const BULK_INGEST = 200_000;

/** Every figure of one column; a figure a failed step could not give stays undefined. */
export interface Figures {
  buildS: number;
  eventLogMb: number;
  storeMb: number;
  firstStartS: number;
  importS: number;
  /** Readers answered 200 by /score after the first start, out of `readers`. */
  served: number;
  readers: number;
  dataDirMb: number;
  stopS: number;
  startupS: number;
  rssMb: number;
  peakMb: number;
  idleCpuPercent: number;
  creates: number;
  createP50Ms: number;
  createP99Ms: number;
  createMaxMs: number;
  stallMs: number;
  /** The same, right after BULK_INGEST scores were accepted, while the views take them in. */
  createP99AfterIngestMs: number;
  createMaxAfterIngestMs: number;
  stallAfterIngestMs: number;
  scoreRps: number;
  scoreP99Ms: number;
  ingest1PerS: number;
  ingest32PerS: number;
  ingestBatchPerS: number;
}

export interface Column {
  shape: DataSetShape;
  figures: Partial<Figures>;
  notes: string[];
}

export interface MeasureSettings {
  productRoot: string;
  env: Record<string, string>;
  secret: string;
  startTimeoutMs: number;
  createBudgetMs: number;
  now: Date;
}

const MB = 1024 * 1024;

/**
 * One column: build the data set, start the product on it (the first start, which on the new
 * storage imports it), stop, start again and measure the running product, then remove it all.
 * A failing step is noted and the next one tried; a product that failed to start or died ends
 * the column.
 */
export async function measureDataSet(shape: DataSetShape, settings: MeasureSettings): Promise<Column> {
  const column: Column = { shape, figures: {}, notes: [] };
  const figures = column.figures;
  const say = (message: string) => process.stderr.write(`[${shape.name}] ${message}\n`);
  const dir = await mkdtemp(join(tmpdir(), 'rsd-bench-scale-'));
  trackDirectory(dir);
  let phase = 'building the data set';
  try {
    say(`building ${describe(shape)}`);
    const built = await buildDataSet(dir, shape, settings.now);
    figures.buildS = built.buildMs / 1000;
    figures.eventLogMb = built.eventLogBytes / MB;
    figures.storeMb = built.storeBytes / MB;
    say(`built in ${figures.buildS.toFixed(1)} s (${(figures.eventLogMb + figures.storeMb).toFixed(0)} MB); first start`);

    phase = 'first start';
    const first = await startProduct(settings.productRoot, dir, settings.env, settings.startTimeoutMs);
    figures.firstStartS = first.spawnToReadyMs / 1000;
    figures.importS = first.importS;
    figures.readers = built.readers.length;
    let stopMs = NaN;
    try {
      figures.served = await servedReaders(first.urls.readApi, built.readers);
    } finally {
      stopMs = await first.stop();
    }
    figures.stopS = stopMs / 1000;
    if (figures.served < built.readers.length)
      column.notes.push(`after the first start, ${figures.served} of ${built.readers.length} readers got their score`);
    // After the stop, so that whatever the first start wrote (an import, say) is all on disk.
    figures.dataDirMb = (await bytesUnder(dir)) / MB;

    phase = 'start-up';
    say(`first start ${figures.firstStartS.toFixed(1)} s; stop ${(stopMs / 1000).toFixed(1)} s; start-up`);
    const product = await startProduct(settings.productRoot, dir, settings.env, settings.startTimeoutMs);
    figures.startupS = product.spawnToReadyMs / 1000;
    phase = 'measuring the running product';
    try {
      await measureRunning(product, built.readers, column, settings, say);
    } finally {
      await product.stop();
    }
  } catch (error) {
    column.notes.push(`${phase} failed: ${messageOf(error)}`);
    say(`${phase} failed: ${messageOf(error)}`);
  } finally {
    removeDirectory(dir);
  }
  return column;
}

async function measureRunning(
  product: RunningProduct,
  readers: Reader[],
  column: Column,
  settings: MeasureSettings,
  say: (message: string) => void,
): Promise<void> {
  const { figures, notes } = column;
  const step = async (name: string, measure: () => Promise<void>) => {
    const died = product.exited();
    if (died) throw new Error(`the product ${died} before ${name}`);
    say(name);
    try {
      await measure();
    } catch (error) {
      notes.push(`${name} failed: ${messageOf(error)}`);
    }
  };
  const reader = readers[0]!;
  const adminToken = await signDevToken(settings.secret, { org: reader.organizationId, scope: 'authorizations:write' });
  // A scoring engine's token: no org claim, so it posts for every organization.
  const engineToken = await signDevToken(settings.secret, { scope: 'scores:write' });
  const createRound = () =>
    createsWhileReadingApart({
      urls: product.urls,
      organizationId: reader.organizationId,
      token: adminToken,
      reader,
      budgetMs: settings.createBudgetMs,
    });

  await step('idle: RSS and CPU', async () => {
    const idle = await idleFigures(product.pid);
    figures.rssMb = idle.rssMb;
    figures.peakMb = idle.peakMb;
    figures.idleCpuPercent = idle.cpuPercent;
  });
  await step('creates while reading', async () => {
    const created = await createRound();
    figures.creates = created.creates;
    figures.createP50Ms = created.p50Ms;
    figures.createP99Ms = created.p99Ms;
    figures.createMaxMs = created.maxMs;
    figures.stallMs = created.stallMs;
    if (created.creates < CREATES)
      notes.push(`creates: ${created.creates} of ${CREATES} within the ${settings.createBudgetMs / 1000} s budget`);
    if (created.failedReads > 0) notes.push(`creates: ${created.failedReads} of ${created.reads} reads alongside failed`);
  });
  await step('/score under load', async () => {
    const load = await scoreLoad(product.urls.readApi, readers);
    figures.scoreRps = load.rps;
    figures.scoreP99Ms = load.p99Ms;
    if (load.non2xx > 0) notes.push(`/score load: ${load.non2xx} non-2xx answers`);
  });
  const ingest = async (name: string, connections: number, batch: boolean, set: (perS: number) => void) =>
    step(name, async () => {
      const bodies = batch ? batchBodies(column.shape, settings.now) : singleScoreBodies(column.shape, settings.now);
      const load = await ingestLoad(product.urls.scoreIngest, engineToken, bodies, batch ? BATCH_SIZE : 1, connections);
      set(load.scoresPerS);
      if (load.non2xx + load.errors > 0) notes.push(`${name}: ${load.non2xx} non-2xx answers, ${load.errors} connection errors`);
    });
  await ingest('ingest, single scores, 1 connection', 1, false, (perS) => (figures.ingest1PerS = perS));
  await ingest('ingest, single scores, 32 connections', 32, false, (perS) => (figures.ingest32PerS = perS));
  await ingest('ingest, batches of 1,000, 1 connection', 1, true, (perS) => (figures.ingestBatchPerS = perS));
  await step('creates while reading, right after a bulk ingest', async () => {
    const nextBatch = batchBodies(column.shape, settings.now);
    for (let accepted = 0; accepted < BULK_INGEST; accepted += BATCH_SIZE) {
      const answer = await fetch(`${product.urls.scoreIngest}/v1/scores`, {
        method: 'POST',
        headers: { authorization: `Bearer ${engineToken}`, 'content-type': 'application/json' },
        body: nextBatch(),
      });
      await answer.arrayBuffer();
      if (answer.status !== 202) throw new Error(`bulk ingest answered ${answer.status}`);
    }
    const created = await createRound();
    figures.createP99AfterIngestMs = created.p99Ms;
    figures.createMaxAfterIngestMs = created.maxMs;
    figures.stallAfterIngestMs = created.stallMs;
    if (created.failedReads > 0) notes.push(`creates after the bulk ingest: ${created.failedReads} of ${created.reads} reads failed`);
  });
  const died = product.exited();
  if (died) notes.push(`the product ${died}`);
}

/** The "starts and serves" check: every reader's /score answers 200 with a score. */
async function servedReaders(readApi: string, readers: readonly Reader[]): Promise<number> {
  let served = 0;
  for (const reader of readers) {
    const response = await fetch(`${readApi}/v1/customers/${reader.clientId}/score`, { headers: { 'x-api-key': reader.apiKey } });
    const body = (await response.json()) as { score?: unknown };
    if (response.status === 200 && typeof body.score === 'number') served += 1;
  }
  return served;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
