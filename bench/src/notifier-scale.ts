import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { optionsOrExit, readFlags, required, UsageError } from './command-line';
import { cleanUpOnExit, removeDirectory, trackDirectory } from './scale/cleanup';
import { machine } from './scale/proc-stats';
import { distributedServiceSpecs, logTail, distributedSecrets, spawnService, type ServiceProcess } from './service-process';
import { scrapeNotifier } from './webhooks-load/notifier-metrics';
import { startReceiver, type Receiver } from './webhooks-load/receiver';
import { postScores } from './webhooks-load/scores';
import { subscribeAll, type Subscriber } from './webhooks-load/subscriptions';

// Decision 52's benchmark: webhook deliveries per second with one, two and three notifier replicas,
// in one run, on the distributed runtime (KAFKA_BROKERS, MONGO_URL, REDIS_URL: the engines must be
// up). Each phase has subscriptions of its own (a grant and a webhook each, `perOrganization` to an
// organization, at a receiver of its own in this process); the phase posts one score per organization
// and times the first post to the last delivery. Replicas are added between phases and measured once
// their queue shards are shared (every replica holds some, all 32 held). `npm run bench` runs it among
// its distributed rows (BENCH_ONLY=notifier-scale alone), `npm run bench:notifier-scale` with flags.

const USAGE = `usage: npm run bench:notifier-scale -- [--subscriptions N] [--per-organization P] [--replicas 1,2,3] [--concurrency C]
  --subscriptions     deliveries per phase (default 1000)
  --per-organization  subscriptions per organization (default 100): one score plans P deliveries, so the
                      queue's workers are measured rather than the planning of one event per delivery
  --replicas       the replica counts measured, in order, each more than the one before (default 1,2,3)
  --concurrency    WEBHOOK_CONCURRENCY of each replica (default 12: on FerretDB, every replica's summed must
                   stay under its 50 PostgreSQL connections, below)
Needs KAFKA_BROKERS, MONGO_URL and REDIS_URL (for the single-server engines: source /tmp/infra-env.sh).`;

export interface NotifierScaleOptions {
  subscriptions: number;
  perOrganization: number;
  replicas: number[];
  concurrency: number;
}

/** The engines the phases run on (the single-server ones: source /tmp/infra-env.sh). */
export interface Engines {
  brokers: string;
  mongoUrl: string;
  redisUrl: string;
}

/**
 * FerretDB 1.24 (the MongoDB-wire stand-in) runs an update as a query whose cursor holds one of its
 * pool's PostgreSQL connections while each matched document is rewritten in a transaction on another
 * (internal/handler/msg_update.go, then internal/backends/postgresql/collection.go UpdateAll); the pool
 * holds 50 (pool_max_conns, internal/backends/postgresql/metadata/pool/uri.go). Fifty updates at once
 * each hold their first connection and wait on each other for a second: every attempt's outcome is an
 * update, so three replicas of the default 32 attempts in flight (96) hang it. Every replica runs 12:
 * three replicas at 36 stay under 50 with the other services' updates. The attempts in flight are fixed
 * per replica, not per phase, because that is how a deployment scales out (each replica added with the
 * same settings): a phase then says what one more replica of the same configuration adds. A fixed total
 * split over the replicas would say only what sharing the same work costs. MongoDB has no such limit.
 */
const FERRETDB_SAFE_CONCURRENCY = 12;

/** The connections of FerretDB 1.24's pool: every replica's attempts in flight summed must stay well under them. */
const FERRETDB_POOL = 50;

export const NOTIFIER_SCALE_DEFAULTS: NotifierScaleOptions = {
  subscriptions: 1_000,
  perOrganization: 100,
  replicas: [1, 2, 3],
  concurrency: FERRETDB_SAFE_CONCURRENCY,
};

const PORTS = { credentials: 18881, scoreIngest: 18882, notifiers: [18883, 18884, 18885, 18886, 18887, 18888] };
const DRAIN_TIMEOUT_MS = 300_000;
const SHARDS = 32;

function parseOptions(argv: string[]): NotifierScaleOptions {
  const options: NotifierScaleOptions = { ...NOTIFIER_SCALE_DEFAULTS, replicas: [...NOTIFIER_SCALE_DEFAULTS.replicas] };
  readFlags(
    argv,
    {
      subscriptions: (value, flag) => {
        options.subscriptions = Number(required(value, flag));
        if (!Number.isInteger(options.subscriptions) || options.subscriptions < 1)
          throw new UsageError(`${flag} must be a positive integer`);
      },
      'per-organization': (value, flag) => {
        options.perOrganization = Number(required(value, flag));
        if (!Number.isInteger(options.perOrganization) || options.perOrganization < 1)
          throw new UsageError(`${flag} must be a positive integer`);
      },
      concurrency: (value, flag) => {
        options.concurrency = Number(required(value, flag));
        if (!Number.isInteger(options.concurrency) || options.concurrency < 1) throw new UsageError(`${flag} must be a positive integer`);
      },
      replicas: (value, flag) => {
        options.replicas = required(value, flag).split(',').map(Number);
        const increasing = options.replicas.every(
          (n, i) => Number.isInteger(n) && n >= 1 && n <= PORTS.notifiers.length && n > (options.replicas[i - 1] ?? 0),
        );
        if (!increasing) throw new UsageError(`${flag} must be increasing counts from 1 to ${PORTS.notifiers.length}`);
      },
    },
    (arg) => `unknown argument ${arg}`,
  );
  return options;
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 250));
  }
}

/** Until `service` answers /readyz with 200; at once, with its log's tail, if it exits first. */
async function ready(service: ServiceProcess): Promise<void> {
  await until(
    async () => service.unexpectedExit !== undefined || (await fetch(`${service.url}/readyz`)).status === 200,
    90_000,
    `${service.name} ready`,
  );
  if (service.unexpectedExit) throw new Error(`${service.name} exited before it was ready:\n${logTail(service.logFile)}`);
}

/** The queue shards each replica holds (`rsd_leases_held{work="notifier-queue"}`). */
async function shardsHeld(notifiers: readonly ServiceProcess[]): Promise<number[]> {
  return Promise.all(
    notifiers.map(async (notifier) => {
      const text = await fetch(`${notifier.url}/metrics`).then((answer) => answer.text());
      const line = text
        .split('\n')
        .find((candidate) => candidate.startsWith('rsd_leases_held{') && candidate.includes('work="notifier-queue"'));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    }),
  );
}

export interface PhaseFigures {
  replicas: number;
  shards: number[];
  drainS: number | undefined;
  firstS: number | undefined;
  perSecond: number | undefined;
  duplicateIds: number;
  succeeded: number[];
  /** Attempts that failed (each retried with the same webhook-id: a receiver that got it sees it twice). */
  failed: number;
}

/** The engines named by KAFKA_BROKERS, MONGO_URL and REDIS_URL, or undefined when one is missing. */
export function enginesFromEnv(env: NodeJS.ProcessEnv = process.env): Engines | undefined {
  const [brokers, mongoUrl, redisUrl] = [env.KAFKA_BROKERS, env.MONGO_URL, env.REDIS_URL];
  return brokers && mongoUrl && redisUrl ? { brokers, mongoUrl, redisUrl } : undefined;
}

export interface NotifierScaleRun {
  /** What was run, where and when: the lines above the table. */
  heading: string[];
  figures: PhaseFigures[];
}

/** Every phase of `options` on `engines`, its progress to `say`; the services and databases it made are gone when it returns. */
export async function measureNotifierScale(
  options: NotifierScaleOptions,
  { brokers, mongoUrl, redisUrl }: Engines,
  say: (line: string) => void,
): Promise<NotifierScaleRun> {
  const run = randomUUID().slice(0, 8);
  const devSecret = randomBytes(32).toString('base64url');
  const databases = [`nscale_credentials_${run}`, `nscale_views_${run}`, `nscale_notifier_${run}`, `nscale_subject_keys_${run}`];
  const common = {
    RUNTIME: 'distributed',
    KAFKA_BROKERS: brokers,
    MONGO_URL: mongoUrl,
    REDIS_URL: redisUrl,
    CREDENTIALS_DB: databases[0]!,
    READ_VIEWS_DB: databases[1]!,
    NOTIFIER_DB: databases[2]!,
    JWT_HS256_SECRET: devSecret,
    LOG_LEVEL: 'warn',
    KAFKA_TOPIC_PARTITIONS: '6',
    // Every request comes from 127.0.0.1: a webhook create tried before the notifier knows its grant counts as a failed authentication.
    FAILED_AUTH_LIMIT_PER_MINUTE: '1000000',
    ...distributedSecrets(),
    SUBJECT_KEYS_DB: databases[3]!,
  };
  const notifierEnv = {
    ...common,
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_CONCURRENCY: String(options.concurrency),
  };
  const logDir = await mkdtemp(join(tmpdir(), 'rsd-notifier-scale-'));
  trackDirectory(logDir);
  const started: ServiceProcess[] = [];
  const receivers: Receiver[] = [];
  const heading = [
    `Webhook deliveries per second by notifier replicas (decision 52): ${options.subscriptions} deliveries per phase ` +
      `(${options.perOrganization} subscriptions per organization), replicas ${options.replicas.join(', ')}, ` +
      `${options.concurrency} attempts in flight per replica (WEBHOOK_CONCURRENCY; ${options.concurrency * Math.max(...options.replicas)} in all with ` +
      `${Math.max(...options.replicas)}, to stay under FerretDB 1.24's ${FERRETDB_POOL} PostgreSQL connections)`,
    `${await machine()}; node ${process.version}; ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    `Engines: Kafka ${brokers}, MongoDB-wire ${mongoUrl.replace(/\/\/[^@]*@/, '//')}, Redis; one credentials and one score-ingest process; everything on this machine's cores`,
  ];
  say(heading.join('\n'));
  if (options.concurrency * Math.max(...options.replicas) >= FERRETDB_POOL - 10)
    say(
      `warning: on FerretDB 1.24, ${options.concurrency * Math.max(...options.replicas)} attempts in flight can deadlock it for every client`,
    );
  try {
    for (const spec of distributedServiceSpecs(
      { readApis: [], credentials: PORTS.credentials, scoreIngest: PORTS.scoreIngest },
      common,
      () => ({}),
    )) {
      started.push(spawnService(spec, logDir, 15_000));
    }
    const startNotifier = (index: number) => {
      const port = PORTS.notifiers[index]!;
      const notifier = spawnService(
        {
          name: `notifier-${index + 1}`,
          script: 'services/notifier/dist/main.js',
          port,
          env: { ...notifierEnv, NOTIFIER_PORT: String(port), NOTIFIER_HOST: '127.0.0.1' },
        },
        logDir,
        15_000,
      );
      started.push(notifier);
      return notifier;
    };
    const notifiers = [startNotifier(0)];
    for (const service of started) await ready(service);

    // Every phase's subscriptions first, through the first replica: the phases then differ only in replicas.
    const phases: { receiver: Receiver; subscribers: Subscriber[] }[] = [];
    for (const [index] of options.replicas.entries()) {
      const receiver = await startReceiver(options.subscriptions, 10);
      receivers.push(receiver);
      const urls = { credentials: started[0]!.url, scoreIngest: started[1]!.url, notifier: notifiers[0]!.url };
      const setup = await subscribeAll(urls, devSecret, receiver, {
        run: `${run}-${index}`,
        count: options.subscriptions,
        concurrency: 8,
        onProgress: () => undefined,
        perOrganization: options.perOrganization,
      });
      say(`setup of phase ${index + 1}: ${options.subscriptions} subscriptions in ${setup.seconds.toFixed(1)} s`);
      phases.push({ receiver, subscribers: setup.subscribers });
    }

    const figures: PhaseFigures[] = [];
    for (const [index, replicas] of options.replicas.entries()) {
      while (notifiers.length < replicas) notifiers.push(startNotifier(notifiers.length));
      for (const notifier of notifiers) await ready(notifier);
      await until(
        async () => {
          const held = await shardsHeld(notifiers);
          return held.every((n) => n > 0) && held.reduce((a, b) => a + b, 0) === SHARDS;
        },
        60_000,
        `${replicas} replicas sharing the shards`,
      );
      const shards = await shardsHeld(notifiers);
      const before = await Promise.all(notifiers.map((notifier) => scrapeNotifier(notifier.url)));
      const { receiver, subscribers } = phases[index]!;
      const drained = receiver.allDelivered(options.subscriptions, DRAIN_TIMEOUT_MS);
      // One score per organization: each plans a delivery to every one of its subscriptions.
      const posted = await postScores(
        started[1]!.url,
        devSecret,
        subscribers.filter((_, i) => i % options.perOrganization === 0),
      );
      const complete = await drained;
      const tally = receiver.tally();
      const after = await Promise.all(notifiers.map((notifier) => scrapeNotifier(notifier.url)));
      const drainS = complete && tally.lastAt !== undefined ? (tally.lastAt - posted.firstPostAt) / 1000 : undefined;
      figures.push({
        replicas,
        shards,
        drainS,
        firstS: tally.firstAt === undefined ? undefined : (tally.firstAt - posted.firstPostAt) / 1000,
        perSecond: drainS === undefined ? undefined : options.subscriptions / drainS,
        duplicateIds: tally.duplicateIds,
        succeeded: after.map((metrics, i) => (metrics.deliveries.succeeded ?? 0) - (before[i]?.deliveries.succeeded ?? 0)),
        failed: after.reduce((sum, metrics, i) => sum + (metrics.deliveries.failed ?? 0) - (before[i]?.deliveries.failed ?? 0), 0),
      });
      say(`phase ${index + 1} (${replicas} replicas): ${drainS === undefined ? 'did not drain' : `${drainS.toFixed(2)} s`}`);
    }
    for (const service of started) if (service.unexpectedExit) say(`${service.name} exited early:\n${logTail(service.logFile)}`);
    return { heading, figures };
  } finally {
    for (const service of started.reverse()) await service.stop();
    for (const receiver of receivers) await receiver.close();
    const client = await MongoClient.connect(mongoUrl).catch(() => undefined);
    if (client) {
      for (const name of databases)
        await client
          .db(name)
          .dropDatabase()
          .catch(() => undefined);
      await client.close();
    }
    removeDirectory(logDir);
  }
}

/**
 * The phases as a table, each phase's deliveries per second also as a ratio to the first phase's
 * (the house's baseline: what one more replica of the same settings adds).
 */
export function notifierScaleTable(figures: readonly PhaseFigures[]): string {
  const first = figures[0];
  const ratioTo = first ? `ratio to ${first.replicas} replica${first.replicas === 1 ? '' : 's'}` : 'ratio';
  const rows = [
    [
      'replicas',
      'shards held',
      'first delivery',
      'last delivery',
      'deliveries/s',
      ratioTo,
      'succeeded by replica',
      'failed attempts',
      'webhook-ids twice',
    ],
    ...figures.map((f) => [
      String(f.replicas),
      f.shards.join('/'),
      f.firstS === undefined ? '-' : `${f.firstS.toFixed(2)} s`,
      f.drainS === undefined ? 'not drained' : `${f.drainS.toFixed(2)} s`,
      f.perSecond === undefined ? '-' : f.perSecond.toFixed(0),
      f.perSecond === undefined || first?.perSecond === undefined ? '-' : `${(f.perSecond / first.perSecond).toFixed(2)}×`,
      f.succeeded.join('/'),
      String(f.failed),
      String(f.duplicateIds),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(rows[0]!), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

async function main(): Promise<void> {
  const options = optionsOrExit(USAGE, parseOptions);
  const engines = enginesFromEnv();
  if (!engines) throw new Error('KAFKA_BROKERS, MONGO_URL and REDIS_URL must name the engines');
  cleanUpOnExit();
  const { heading, figures } = await measureNotifierScale(options, engines, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`\n${heading.join('\n')}\n\n${notifierScaleTable(figures)}\n`);
}

// `npm run bench:notifier-scale`; `npm run bench` imports the measurement (BENCH_ONLY=notifier-scale and its distributed rows).
if (require.main === module)
  main().catch((error: unknown) => {
    process.stderr.write(`notifier-scale failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
