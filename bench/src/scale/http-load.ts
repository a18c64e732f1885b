import autocannon from 'autocannon';
import type { Reader } from './build-data-set';

export interface ReadLoad {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

export interface IngestLoad {
  scoresPerS: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

const READ_CONNECTIONS = 32;
const READ_DURATION_S = 10;
const INGEST_DURATION_S = 5;

/**
 * /score under 32 connections for 10 s after a 2 s warm-up, as run.ts's `load`; each connection
 * cycles through every reader, so the lookups land all over the data set rather than on one entry.
 */
export async function scoreLoad(readApi: string, readers: readonly Reader[]): Promise<ReadLoad> {
  const requests = readers.map((reader) => ({
    method: 'GET' as const,
    path: `/v1/customers/${reader.clientId}/score`,
    headers: { 'x-api-key': reader.apiKey },
  }));
  await autocannon({ url: readApi, connections: READ_CONNECTIONS, duration: 2, requests });
  const result = await autocannon({ url: readApi, connections: READ_CONNECTIONS, duration: READ_DURATION_S, requests });
  return { rps: result.requests.average, p50Ms: result.latency.p50, p99Ms: result.latency.p99, non2xx: result.non2xx };
}

/**
 * POST /v1/scores for a few seconds after a 1 s warm-up; `nextBody` gives every request its own
 * body. Scores per second counts accepted (2xx) requests only, times the scores each carried.
 */
export async function ingestLoad(
  scoreIngest: string,
  token: string,
  nextBody: () => string,
  scoresPerRequest: number,
  connections: number,
): Promise<IngestLoad> {
  const options = {
    url: `${scoreIngest}/v1/scores`,
    method: 'POST' as const,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    connections,
    requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, body: nextBody() }) }],
  };
  await autocannon({ ...options, duration: 1 });
  const result = await autocannon({ ...options, duration: INGEST_DURATION_S });
  return {
    scoresPerS: (result['2xx'] * scoresPerRequest) / result.duration,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}
