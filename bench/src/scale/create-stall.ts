import { Agent, request } from 'node:http';
import type { Reader } from './build-data-set';
import { percentile, sleep } from './percentiles';

export interface CreateFigures {
  /** Creates measured: 200, or fewer when the time budget ran out first. */
  creates: number;
  p50Ms: number;
  p99Ms: number;
  /** The slowest /score answer among the reads that overlapped the creates. */
  stallMs: number;
  reads: number;
  /** Reads answered other than 200 while the creates ran. */
  failedReads: number;
}

const CREATES = 200;
/** Issue 27: administrators create four at a time; their creates must share the store's syncs. */
const IN_FLIGHT = 4;

/**
 * Administrators create authorizations while recipients read: POST …/authorizations, four in
 * flight, with a real token, while one keep-alive connection reads /score back to back. On a store
 * rewritten whole on every change, a create blocks the process for as long as the rewrite takes,
 * and the reader sees it as a stall.
 */
export async function createsWhileReading(
  urls: { credentials: string; readApi: string },
  organizationId: string,
  token: string,
  reader: Reader,
  budgetMs: number,
): Promise<CreateFigures> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const reads: { from: number; to: number; status: number }[] = [];
  let reading = true;
  const readLoop = (async () => {
    while (reading) {
      const from = performance.now();
      // A refused connection counts as a failed read (status 0), and the loop goes on.
      const status = await get(`${urls.readApi}/v1/customers/${reader.clientId}/score`, { 'x-api-key': reader.apiKey }, agent).catch(
        () => 0,
      );
      reads.push({ from, to: performance.now(), status });
      if (status === 0) await sleep(10);
    }
  })();

  const create = async (n: number) => {
    const from = performance.now();
    const response = await fetch(`${urls.credentials}/v1/organizations/${organizationId}/authorizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipientType: 'partner', recipientName: `Scale bench partner ${n}`, scopes: ['qr_score'] }),
    });
    await response.arrayBuffer();
    if (response.status !== 201) throw new Error(`create answered ${response.status}`);
    return performance.now() - from;
  };

  const latencies: number[] = [];
  let window = { from: 0, to: 0 };
  try {
    await sleep(200); // the reader in its stride first
    await create(0); // opens the connection; not counted
    window = { from: performance.now(), to: 0 };
    let started = 0;
    const creator = async () => {
      while (started < CREATES && performance.now() - window.from < budgetMs) latencies.push(await create((started += 1)));
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, creator));
    window.to = performance.now();
  } finally {
    reading = false;
    await readLoop;
    agent.destroy();
  }
  const during = reads.filter((read) => read.from < window.to && read.to > window.from);
  return {
    creates: latencies.length,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    stallMs: during.reduce((worst, read) => Math.max(worst, read.to - read.from), during.length > 0 ? 0 : NaN),
    reads: during.length,
    failedReads: during.filter((read) => read.status !== 200).length,
  };
}

/** A GET on the given single-connection agent; resolves with the status once the body is read. */
function get(url: string, headers: Record<string, string>, agent: Agent): Promise<number> {
  return new Promise((done, fail) => {
    const req = request(url, { headers, agent }, (response) => {
      response.resume();
      response.once('end', () => done(response.statusCode ?? 0));
      response.once('error', fail);
    });
    req.once('error', fail);
    req.end();
  });
}
