import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO_ROOT, untilReady } from './embedded-process';
import type { ServiceProcess } from './service-process';

const run = promisify(execFile);

/**
 * The distributed suites against a running Compose stack instead of processes of their own:
 * RSD_DISTRIBUTED_STACK=compose, with COMPOSE_FILE naming docker-compose.yml, its local override and
 * test/distributed/docker-compose.test.yml (which publishes Kafka and the MongoDB-wire server on
 * loopback and sets the services' test timings), and KAFKA_BROKERS / MONGO_URL at those ports.
 * scripts/ci/containers.sh sets all of it. The services are the stack's containers at their
 * published ports; stopping, killing and starting one goes through `docker compose`.
 */
export const onComposeStack = process.env.RSD_DISTRIBUTED_STACK === 'compose';

/** The stack's database names (docker-compose.yml): its services are configured with them. */
export const COMPOSE_DATABASES = { credentials: 'rsd_credentials', readViews: 'rsd_read_views', notifier: 'rsd_notifier' };

/** Host ports the stack publishes its services on (docker-compose.yml). */
export const COMPOSE_PORTS = { readApi1: 8080, readApi2: 8090, credentials: 8081, scoreIngest: 8082, notifier: 8083 };

/**
 * The environment of a suite that runs against a stack started elsewhere (Compose or the cluster):
 * KAFKA_BROKERS and MONGO_URL as the environment names its published servers, the stack's databases and timings.
 */
export function stackEnv(databases: { credentials: string; readViews: string }, timings: Record<string, string>): Record<string, string> {
  return {
    KAFKA_BROKERS: process.env.KAFKA_BROKERS ?? '',
    MONGO_URL: process.env.MONGO_URL ?? '',
    CREDENTIALS_DB: databases.credentials,
    READ_VIEWS_DB: databases.readViews,
    ...timings,
  };
}

/** The timings test/distributed/docker-compose.test.yml gives the services, as the suites give their processes. */
export const COMPOSE_TEST_TIMINGS = { FEED_STALENESS_BOUND_MS: '5000' };

export async function compose(...args: string[]): Promise<string> {
  const { stdout } = await run('docker', ['compose', ...args], { cwd: REPO_ROOT, maxBuffer: 256 * 1024 * 1024 });
  return stdout;
}

/** The hostname a service's container runs with (what `os.hostname()` answers inside it). */
export async function containerHostname(service: string): Promise<string> {
  const id = (await compose('ps', '--all', '--quiet', service)).trim();
  const { stdout } = await run('docker', ['inspect', '--format', '{{.Config.Hostname}}', id]);
  return stdout.trim();
}

/** The gateway of the stack's network: the address of this machine that its containers reach. */
export async function stackGateway(): Promise<string> {
  const { stdout } = await run('docker', ['network', 'inspect', '--format', '{{range .IPAM.Config}}{{.Gateway}} {{end}}', 'rsd_default']);
  const gateway = stdout.trim().split(/\s+/)[0];
  if (!gateway) throw new Error('the network rsd_default has no gateway');
  return gateway;
}

export interface ComposeService extends ServiceProcess {
  /** Starts the stopped container again and waits until /readyz answers 200. */
  start(): Promise<void>;
}

/**
 * A service of the stack as the suites use a process: its URL, its log (every run of its container),
 * SIGTERM as `docker compose stop` and SIGKILL as `docker compose kill`. Resolves once it is ready.
 */
export async function composeService(service: string, port: number): Promise<ComposeService> {
  const url = `http://127.0.0.1:${port}`;
  const ready = () => untilReady(url);
  await ready();
  return {
    url,
    output: () => {
      const logs = spawnSync('docker', ['compose', 'logs', '--no-color', '--no-log-prefix', service], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
      });
      return `${logs.stdout}${logs.stderr}`;
    },
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (signal === 'SIGKILL') await compose('kill', '--signal', 'SIGKILL', service);
      else await compose('stop', '--timeout', '15', service);
    },
    start: async () => {
      await compose('start', service);
      await ready();
    },
  };
}
