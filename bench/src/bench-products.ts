import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { EPHEMERAL_PORTS, ownSession, ROOT, startNode, type Started } from './processes';
import { distributedSecrets } from './service-process';

/** A product the bench loads, on either runtime: where it answers, and how to stop it. */
export interface Product {
  /** The process serving the read API, when it is one of ours (its CPU time is measured). */
  pid?: number;
  /** The distributed credentials service's process, which also folds the access log into usage counts. */
  credentialsPid?: number;
  /** The (first) read API's standard output, while it runs. */
  readApiLog?: string;
  /** Distributed: what every process of the stack was given (its databases, its secrets), for a task run beside it. */
  env?: Record<string, string>;
  readApis: string[];
  credentials: string;
  scoreIngest: string;
  stop(): Promise<void>;
}

/** What every product the bench starts is given: `secret` for the development tokens, and the rate limits out of the load's way. */
export function productEnv(secret: string): Record<string, string> {
  return {
    JWT_HS256_SECRET: secret,
    LOG_LEVEL: 'info',
    // The per-credential limit would stop the load after 120 requests; everything else is as shipped.
    RATE_LIMIT_PER_MINUTE: '1000000000',
    FAILED_AUTH_LIMIT_PER_MINUTE: '1000000000',
    ACCOUNT_RATE_LIMIT_PER_MINUTE: '1000000000',
  };
}

export async function until(check: () => Promise<boolean>, timeoutMs: number, everyMs = 2): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, everyMs));
  }
}

/** `build`: the checkout whose services/embedded/dist runs (default: this one; a comparison names another). */
export async function startEmbeddedProduct(
  secret: string,
  dataDir: string,
  env: Record<string, string> = {},
  build = ROOT,
): Promise<Product> {
  const started = await startNode(
    join(build, 'services/embedded/dist/main.js'),
    [],
    {
      ...productEnv(secret),
      DATA_DIR: dataDir,
      ...EPHEMERAL_PORTS,
      ...env,
    },
    (line) => line.msg === 'embedded runtime ready',
    { detached: ownSession('product') },
  );
  return {
    pid: started.child.pid,
    readApis: [String(started.ready.readApi)],
    credentials: String(started.ready.credentials),
    scoreIngest: String(started.ready.scoreIngest),
    stop: () => started.stop(),
  };
}

/**
 * `portBase`: the read API's port (replicas 10 apart), then the credentials service's and score-ingest's; two stacks need two bases.
 * `engines`: the variables that reach the engines (`scripts/infra.sh env` or `cluster env`), over this process's own.
 */
export async function startDistributedProduct(
  secret: string,
  replicas: number,
  build = ROOT,
  portBase = 18180,
  engines: Record<string, string> = {},
): Promise<Product> {
  const run = randomUUID().slice(0, 8);
  const env = {
    ...productEnv(secret),
    RUNTIME: 'distributed',
    ...engines,
    CREDENTIALS_DB: `bench_credentials_${run}`,
    READ_VIEWS_DB: `bench_views_${run}`,
    // Every replica signs with the same key (decision 24) and opens what the others sealed (decision 56; a checkout
    // before it ignores the master key), as a secret would give them.
    ...distributedSecrets(),
    SUBJECT_KEYS_DB: `bench_subject_keys_${run}`,
  };
  const ports = { credentials: portBase + 1, scoreIngest: portBase + 2, readApi: portBase };
  const processes: Started[] = [];
  const listening = (line: Record<string, unknown>) => typeof line.msg === 'string' && line.msg.includes('listening');
  processes.push(
    await startNode(
      join(build, 'services/credentials/dist/main.js'),
      [],
      { ...env, CREDENTIALS_PORT: String(ports.credentials) },
      listening,
    ),
  );
  processes.push(
    await startNode(
      join(build, 'services/score-ingest/dist/main.js'),
      [],
      { ...env, SCORE_INGEST_PORT: String(ports.scoreIngest) },
      listening,
    ),
  );
  const readApis: string[] = [];
  for (let i = 0; i < replicas; i += 1) {
    const port = ports.readApi + i * 10;
    processes.push(await startNode(join(build, 'services/read-api/dist/main.js'), [], { ...env, READ_API_PORT: String(port) }, listening));
    readApis.push(`http://127.0.0.1:${port}`);
  }
  const stopAll = async () => {
    for (const p of processes.reverse()) await p.stop();
  };
  // A replica that never gets ready must not leave the stack behind on the next run's ports.
  for (const url of readApis) {
    await until(async () => (await fetch(`${url}/readyz`)).status === 200, 60_000).catch(async (error: unknown) => {
      await stopAll();
      throw error;
    });
  }
  return {
    pid: processes[2]?.child.pid,
    credentialsPid: processes[0]?.child.pid,
    readApiLog: processes[2]?.logFile,
    env,
    readApis,
    credentials: `http://127.0.0.1:${ports.credentials}`,
    scoreIngest: `http://127.0.0.1:${ports.scoreIngest}`,
    stop: stopAll,
  };
}
