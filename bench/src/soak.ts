import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { optionsOrExit } from './command-line';
import { infraShellEnv } from './infra-script';
import { ROOT } from './processes';
import { distributedServiceSpecs, distributedSecrets } from './service-process';
import { SOAK_INFRA, soakInfra } from './soak/infra-instance';
import { MemorySampler } from './soak/memory';
import { parseOptions, USAGE, type SoakOptions } from './soak/options';
import { runOutages } from './soak/outages';
import { goals, render } from './soak/report';
import { RevocationWatch } from './soak/revocations';
import { errorLines, startService, type ServiceProcess, type ServiceSpec } from './soak/services';
import { Tally, Timeline } from './soak/tally';
import { Workload } from './soak/traffic';

// `npm run soak -- --minutes 10`: mixed traffic on the distributed runtime (two read-API replicas,
// creates, revokes, score ingest) while Kafka, the MongoDB-wire server and Redis are each stopped and
// started once, on an infra instance of its own. Prints what it saw and exits 1 if a goal is missed.

const PORTS = { readApis: [28080, 28090], credentials: 28081, scoreIngest: 28082 };
const LOG_DIR = join(SOAK_INFRA.dir, 'services');
const PROGRESS_EVERY_MS = 30_000;

const progress = (line: string) => process.stderr.write(`[soak] ${line}\n`);

function serviceSpecs(options: SoakOptions, infraEnv: Record<string, string>, secret: string): ServiceSpec[] {
  const common = {
    ...infraEnv,
    RUNTIME: 'distributed',
    JWT_HS256_SECRET: secret,
    LOG_LEVEL: 'info',
    CREDENTIALS_DB: 'soak_credentials',
    READ_VIEWS_DB: 'soak_read_views',
    // Every simulated recipient calls from loopback: the per-address failed-authentication limit
    // would turn the revoked-key probes into 429s. The per-credential limit stays as shipped.
    FAILED_AUTH_LIMIT_PER_MINUTE: '1000000',
    ...distributedSecrets(),
  };
  return distributedServiceSpecs(PORTS, common, (letter) => ({
    REPLICA_ID: `soak-${letter}`,
    FEED_STALENESS_BOUND_MS: String(options.stalenessBoundMs),
  }));
}

class Interrupted extends Error {}

async function main(): Promise<number> {
  const options = optionsOrExit(USAGE, (argv) => parseOptions(argv, process.env));

  const abort = new AbortController();
  const services: ServiceProcess[] = [];
  const infra = soakInfra(progress);
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) {
      // A second signal: no more waiting.
      for (const service of services) process.kill(service.pid, 'SIGKILL');
      spawnSync('bash', [join(ROOT, 'scripts/infra.sh'), 'down'], {
        env: infraShellEnv(SOAK_INFRA),
        stdio: 'inherit',
      });
      process.exit(130);
    }
    interrupted = true;
    progress(`${signal}: stopping and cleaning up (again to force)`);
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const check = () => {
    if (abort.signal.aborted) throw new Interrupted();
  };

  try {
    progress(`infra: a fresh instance in ${SOAK_INFRA.dir.replace(`${ROOT}/`, '')} on ports ${Object.values(SOAK_INFRA.ports).join(', ')}`);
    await infra.run('down');
    await infra.run('up');
    check();
    const secret = randomBytes(32).toString('base64url');
    for (const spec of serviceSpecs(options, infra.env, secret)) {
      services.push(await startService(spec, LOG_DIR));
      progress(`${spec.name} ready on :${spec.port} (pid ${services.at(-1)!.pid})`);
      check();
    }
    const [credentials, scoreIngest, ...readApis] = services as [ServiceProcess, ServiceProcess, ...ServiceProcess[]];

    const timeline = new Timeline();
    const tally = new Tally(timeline);
    const watch = new RevocationWatch({
      readApis: readApis.map((r) => r.url),
      tally,
      timeline,
      stalenessBoundMs: options.stalenessBoundMs,
    });
    const workload = new Workload(
      { readApis: readApis.map((r) => r.url), credentials: credentials.url, scoreIngest: scoreIngest.url },
      tally,
      watch,
      secret,
      randomUUID().slice(0, 8),
    );
    await workload.seed();
    check();

    const runMs = options.minutes * 60_000;
    const pauseMs = options.outageSeconds * 1000;
    timeline.begin();
    const memory = new MemorySampler(services, timeline);
    workload.start();
    progress(
      `traffic for ${options.minutes} min; outages at ${[0.25, 0.5, 0.75].map((f) => `${((f * runMs) / 1000).toFixed(0)} s`).join(', ')}`,
    );
    const outages = runOutages(infra, timeline, runMs, pauseMs, abort.signal);
    const ticker = setInterval(() => {
      const t = tally.totals();
      const outlived = watch.summary().outlived;
      progress(
        `${(timeline.elapsedMs() / 1000).toFixed(0)} s, ${timeline.phase}: ${t.requests} requests, ${t.serverErrors} other 5xx, ` +
          `${t.noAnswer} without answer, ${t.documented503} documented 503, ${outlived} revocations outlived, ${workload.pool.size} credentials in use`,
      );
    }, PROGRESS_EVERY_MS);
    await sleep(runMs, undefined, { signal: abort.signal }).catch(() => undefined);
    clearInterval(ticker);
    const skippedTicks = await workload.stop();
    const done = await outages;
    const endMs = timeline.elapsedMs();
    memory.stop();
    progress('traffic stopped; probing every revoked key once more');
    timeline.enter('final probe of revoked keys');
    await watch.finish();

    const window = Math.min(60_000, runMs / 10);
    const summary = watch.summary();
    const date = new Date().toISOString().slice(0, 10);
    const result = {
      header:
        `Soak, ${date}: ${(endMs / 60_000).toFixed(1)} min, ${availableParallelism()} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GB, ` +
        `Node ${process.version}; Kafka, FerretDB and Redis each stopped for ${options.outageSeconds} s plus their restart; ` +
        `staleness bound ${options.stalenessBoundMs / 1000} s`,
      tally,
      timeline,
      outages: done,
      revocations: { ...watch.counts, ...summary, outlived: [...watch.outlived.values()] },
      memory: memory.rows(window, window, endMs),
      errorLines: new Map(services.map((s) => [s.name, errorLines(s.logFile)])),
      crashed: services
        .filter((s) => s.unexpectedExit)
        .map((s) => `${s.name} (exit ${s.unexpectedExit?.code ?? s.unexpectedExit?.signal})`),
      skippedTicks,
    };
    const report = render(result);
    process.stdout.write(
      `\n${report}\nLogs: ${LOG_DIR.replace(`${ROOT}/`, '')}/ and ${SOAK_INFRA.dir.replace(`${ROOT}/`, '')}/<server>/\n`,
    );
    await mkdir(join(ROOT, 'bench/results'), { recursive: true });
    await writeFile(join(ROOT, 'bench/results/soak.md'), `${report}\n`);
    if (interrupted) return 130;
    return goals(result).every((g) => g.met) ? 0 : 1;
  } finally {
    progress('stopping the services and the infra instance');
    await Promise.all(services.map((s) => s.stop()));
    await infra.idle();
    await infra.run('down').catch((error: unknown) => progress(`infra down failed: ${String(error)}`));
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof Interrupted) process.exit(130);
    process.stderr.write(`soak failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
