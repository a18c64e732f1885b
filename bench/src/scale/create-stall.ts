import { fork } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { Agent, request, type RequestOptions } from 'node:http';
import { join } from 'node:path';
import type { Reader } from './build-data-set';
import { percentile, sleep } from './percentiles';

export interface CreateFigures {
  /** Creates measured: CREATES, or fewer when the time budget ran out first. */
  creates: number;
  p50Ms: number;
  p99Ms: number;
  /** The slowest create: the p99 says how often, this how bad. */
  maxMs: number;
  /** The slowest /score answer among the reads that overlapped the creates. */
  stallMs: number;
  reads: number;
  /** Reads answered other than 200 while the creates ran. */
  failedReads: number;
}

/** What the client process (create-stall-client.ts) is asked to do. */
export interface CreateStallRequest {
  urls: { credentials: string; readApi: string };
  organizationId: string;
  token: string;
  reader: Reader;
  budgetMs: number;
}

/**
 * Enough creates for a p99 of a distribution, not of one moment: over a short round the p99 only
 * says whether one of the product's garbage collections fell inside it, since its pause holds the
 * four creates in flight at once. 1,000 take about a second and a quarter, and the slowest is
 * reported beside the p99.
 */
export const CREATES = 1_000;
/** Administrators create four at a time; their creates must share the store's syncs. */
const IN_FLIGHT = 4;

/** createsWhileReading, run by a fresh process of its own (create-stall-client.ts says why). */
export function createsWhileReadingApart(request: CreateStallRequest): Promise<CreateFigures> {
  return new Promise((done, failed) => {
    const client = fork(join(__dirname, 'create-stall-client.js'), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let answer: { figures?: CreateFigures; failed?: string } | undefined;
    client.once('message', (message: typeof answer) => (answer = message));
    client.once('error', failed);
    client.once('exit', (code) => {
      if (answer?.figures) done(answer.figures);
      else failed(new Error(answer?.failed ?? `the create client exited with ${code}`));
    });
    client.send(request);
  });
}

/**
 * Administrators create authorizations while recipients read: POST …/authorizations, four in
 * flight, with a real token, while one keep-alive connection reads /score back to back. On a store
 * rewritten whole on every change, a create blocks the process for as long as the rewrite takes,
 * and the reader sees it as a stall.
 */
export async function createsWhileReading({ urls, organizationId, token, reader, budgetMs }: CreateStallRequest): Promise<CreateFigures> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const readUrl = `${urls.readApi}/v1/customers/${reader.clientId}/score`;
  const readHeaders = { 'x-api-key': reader.apiKey };
  const reads: { from: number; to: number; status: number }[] = [];
  let reading = true;
  const readLoop = (async () => {
    while (reading) {
      const from = performance.now();
      // A refused connection counts as a failed read (status 0), and the loop goes on.
      const status = await send(readUrl, { headers: readHeaders, agent }).catch(() => 0);
      reads.push({ from, to: performance.now(), status });
      if (status === 0) await sleep(10);
    }
  })();

  // node:http rather than fetch: the client shares the two cores with the product, and fetch costs
  // it several times the CPU for the same creates (docs/decisions/0110-read-path-cost.md).
  const createAgent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  const createUrl = `${urls.credentials}/v1/organizations/${organizationId}/authorizations`;
  const createHeaders = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const create = async (n: number) => {
    const from = performance.now();
    const body = JSON.stringify({ recipientType: 'partner', recipientName: `Scale bench partner ${n}`, scopes: ['qr_score'] });
    const status = await send(createUrl, { method: 'POST', headers: createHeaders, agent: createAgent }, body);
    if (status !== 201) throw new Error(`create answered ${status}`);
    return performance.now() - from;
  };

  /** Each create: when it started (ms into the round) and how long it took. */
  const creates: { atMs: number; ms: number }[] = [];
  let window = { from: 0, to: 0 };
  try {
    await sleep(200); // the reader in its stride first
    // Opens the four connections, and not counted: a connection's set-up is not a create's cost.
    await Promise.all(Array.from({ length: IN_FLIGHT }, (_, n) => create(CREATES + 1 + n)));
    window = { from: performance.now(), to: 0 };
    let started = 0;
    const creator = async () => {
      while (started < CREATES && performance.now() - window.from < budgetMs) {
        const atMs = performance.now() - window.from;
        creates.push({ atMs, ms: await create((started += 1)) });
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, creator));
    window.to = performance.now();
  } finally {
    reading = false;
    await readLoop;
    agent.destroy();
    createAgent.destroy();
  }
  // Where in the round the slow creates fall: a line a round, the round's start as a Unix time in ms.
  const tracing = process.env.BENCH_CREATE_TRACE;
  if (tracing) appendFileSync(tracing, `${JSON.stringify({ startedAt: performance.timeOrigin + window.from, creates })}\n`);
  const latencies = creates.map((one) => one.ms);
  const during = reads.filter((read) => read.from < window.to && read.to > window.from);
  return {
    creates: latencies.length,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: percentile(latencies, 1),
    stallMs: during.reduce((worst, read) => Math.max(worst, read.to - read.from), during.length > 0 ? 0 : NaN),
    reads: during.length,
    failedReads: during.filter((read) => read.status !== 200).length,
  };
}

/** A request on the given keep-alive agent; resolves with the status once the body is read. */
function send(url: string, options: RequestOptions, body?: string): Promise<number> {
  return new Promise((done, fail) => {
    const req = request(url, options, (response) => {
      response.resume();
      response.once('end', () => done(response.statusCode ?? 0));
      response.once('error', fail);
    });
    req.once('error', fail);
    req.end(body);
  });
}
