import { randomBytes, randomUUID } from 'node:crypto';
import type { InfraTarget, StartedServer } from '@rsd/testkit';
import {
  productDatabases,
  productEnv,
  scenarioTarget,
  startInto,
  startLoopbackNotifier,
  startReadReplicas,
  stopProduct,
} from './distributed-product';
import { startDistributedServers } from './distributed-servers';
import { freePort } from './raw-http';
import { everyCollection, everyTopicRecord } from './leak-search';
import { TEST_RESPONSE_SIGNING_KEYS, type ServiceProcess } from './service-process';

/** The services a scenario suite talks to. */
export interface ScenarioServices {
  env: Record<string, string>;
  credentials: ServiceProcess;
  scoreIngest: ServiceProcess;
  readApis: ServiceProcess[];
  notifier?: ServiceProcess;
}

export interface ScenarioProductOptions {
  /** The run's databases are `<prefix>_credentials_<runId>`, …; replicas are `<prefix>-<port>`. */
  prefix: string;
  /** Where the processes listen; free loopback ports unless given (a suite whose scenarios name them). */
  ports?: { credentials: number; scoreIngest: number; readApi1: number; readApi2: number; notifier?: number };
  /** A notifier too, its receivers on loopback (decision 28's development flag). */
  notifier?: boolean;
  /** The suite's settings over productEnv's and the response-signing keys, asked for once the servers run. */
  settings?: () => Record<string, string> | Promise<Record<string, string>>;
  /** The token secret; a new one unless given. */
  secret?: string;
  /** A stack started elsewhere (the Compose stack's containers) instead of processes of the suite's own. */
  onStack?: () => Promise<ScenarioServices>;
}

/** A scenario suite's product, read inside its tests (it is there once `beforeAll` has run). */
export interface ScenarioProduct extends Readonly<Required<ScenarioServices>> {
  readonly runId: string;
  readonly secret: string;
  /** What the shared scenarios need: the services' URLs and an administrator's token for any organization. */
  target(): ReturnType<typeof scenarioTarget>;
  /**
   * Everything the run left where a secret must never be: each process's output, every record of the
   * product's topics (read by a client named `<prefix>-leak-<runId>`) and every document of its databases.
   */
  haystacks(): Promise<string[]>;
}

/**
 * Credentials, score ingest, two read-API replicas and (when asked) a notifier as processes of the
 * suite's own on real Kafka, a MongoDB-wire server and Redis, started before the describe block's tests
 * and stopped after them (their databases dropped, the servers started for them stopped).
 */
export function scenarioProduct(kafka: () => InfraTarget, options: ScenarioProductOptions): ScenarioProduct {
  const runId = randomUUID().slice(0, 8);
  const secret = options.secret ?? randomBytes(32).toString('base64url');
  const servers: StartedServer[] = [];
  const processes: ServiceProcess[] = [];
  const outputs: string[] = [];
  let running: ScenarioServices | undefined;
  const current = (): ScenarioServices => {
    if (!running) throw new Error('the scenario product is not started yet');
    return running;
  };

  beforeAll(async () => {
    running = (await options.onStack?.()) ?? (await start());
  }, 180_000);
  // A stack's databases are the stack's: only the run's own are dropped.
  afterAll(() => stopProduct(processes, outputs, servers, options.onStack ? undefined : running?.env), 60_000);

  async function start(): Promise<ScenarioServices> {
    const ports = options.ports ?? {
      credentials: await freePort(),
      scoreIngest: await freePort(),
      readApi1: await freePort(),
      readApi2: await freePort(),
      ...(options.notifier ? { notifier: await freePort() } : {}),
    };
    const env = {
      ...(await startDistributedServers(kafka(), servers)),
      ...productEnv(
        { prefix: options.prefix, runId, jwtSecret: secret, ports },
        { RESPONSE_SIGNING_KEYS: TEST_RESPONSE_SIGNING_KEYS, ...(await options.settings?.()) },
      ),
    };
    const credentials = await startInto(processes, 'credentials', ports.credentials, env);
    const scoreIngest = await startInto(processes, 'score-ingest', ports.scoreIngest, env);
    const notifier = ports.notifier === undefined ? undefined : await startLoopbackNotifier(processes, ports.notifier, env);
    const replicaId = (port: number) => `${options.prefix}-${port}`;
    const readApis = await startReadReplicas(env, [ports.readApi1, ports.readApi2], replicaId, processes);
    return { env, credentials, scoreIngest, readApis, ...(notifier ? { notifier } : {}) };
  }

  return {
    runId,
    secret,
    get env() {
      return current().env;
    },
    get credentials() {
      return current().credentials;
    },
    get scoreIngest() {
      return current().scoreIngest;
    },
    get readApis() {
      return current().readApis;
    },
    get notifier() {
      const { notifier } = current();
      if (!notifier) throw new Error('this scenario product runs no notifier');
      return notifier;
    },
    target: () => scenarioTarget(current(), secret),
    haystacks: async () => {
      const { env, credentials, scoreIngest, readApis, notifier } = current();
      const all = [credentials, scoreIngest, ...(notifier ? [notifier] : []), ...readApis];
      // concat, not push(...): a shared Kafka's topics can hold more records than a call takes arguments.
      return [...outputs, ...all.map((service) => service.output())]
        .concat((await everyTopicRecord(env.KAFKA_BROKERS ?? '', `${options.prefix}-leak-${runId}`)).values)
        .concat((await everyCollection(env.MONGO_URL ?? '', productDatabases(env))).documents);
    },
  };
}
