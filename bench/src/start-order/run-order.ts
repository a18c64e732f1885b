import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { signDevToken } from '@rsd/platform';
import { infra, INFRA_ENV, START_ORDER_INFRA } from './infra';
import type { Server } from './options';
import { distributedServiceSpecs, distributedSecrets } from '../service-process';
import { ReadinessWatch } from './readiness-watch';
import { errorLines, logTail, spawnService, type Exit, type ServiceProcess, type ServiceSpec } from './services';

/** What one run measured; `failures` empty means it passed. */
export interface RunResult {
  repetition: number;
  order: Server[];
  /** Slowest process from spawn to its first /healthz 200. */
  healthyAfterMs: number | undefined;
  /** How long the last server took to start (`infra.sh up` until it answered). */
  lastServerStartMs: number | undefined;
  /** From the last server's start (`infra.sh up` invoked) to all four /readyz 200: the server's own start time included. */
  readyAfterLastServerMs: number | undefined;
  /** From `infra.sh stop kafka` invoked to all four /readyz failing. */
  dropAfterKafkaStopMs: number | undefined;
  /** From Kafka's start (`infra.sh up kafka` invoked) to all four /readyz 200 again for good (then 5 s without a failure). */
  returnAfterKafkaStartMs: number | undefined;
  unexpectedExits: string[];
  /** How each process ended when stopped with SIGTERM at the end. */
  shutdownCodes: string[];
  /** Error-level log lines, by process and message. */
  errorLines: Map<string, number>;
  failures: string[];
  logDir: string;
}

const PORTS = { readApis: [18380, 18390], credentials: 18381, scoreIngest: 18382 };
/** Servers come up one after another with this pause, so every process sees each partial state. */
const PAUSE_BETWEEN_SERVERS_MS = 2_000;
/** Before the first server: the processes retry against nothing for a while. */
const SERVERLESS_MS = 4_000;
const HEALTHY_WITHIN_MS = 10_000;
const READY_WITHIN_MS = 30_000;
const DROP_WITHIN_MS = 30_000;
const RETURN_WITHIN_MS = 90_000;
const STABLE_MS = 5_000;
const ORG = 'start-order-org';

function specs(secret: string): ServiceSpec[] {
  const common = {
    ...INFRA_ENV,
    RUNTIME: 'distributed',
    JWT_HS256_SECRET: secret,
    LOG_LEVEL: 'info',
    KAFKA_TOPIC_PARTITIONS: '3',
    FAILED_AUTH_LIMIT_PER_MINUTE: '100000',
    ...distributedSecrets('start-order'),
  };
  return distributedServiceSpecs(PORTS, common, (letter) => ({ REPLICA_ID: `start-order-${letter}` }));
}

/** Resolves with the time `check` first held, or undefined after `withinMs`; polls every 100 ms. */
async function until(check: () => boolean | Promise<boolean>, withinMs: number, abort: () => void): Promise<number | undefined> {
  const deadline = Date.now() + withinMs;
  while (Date.now() <= deadline) {
    abort();
    if (await check()) return Date.now();
    await sleep(100);
  }
  return undefined;
}

class ProcessExited extends Error {}

/**
 * One run: the four processes before any server, the servers in `order`, all ready within 30 s of
 * the last, a score written and read through both replicas, then a Kafka restart whose readiness
 * drop and return every process must show, and no process ending on its own throughout.
 */
export async function runOrder(
  repetition: number,
  order: Server[],
  progress: (line: string) => void,
  interrupted: AbortSignal,
): Promise<RunResult> {
  const logDir = join(START_ORDER_INFRA.dir, 'services', `${repetition}-${order.join('-')}`);
  const result: RunResult = {
    repetition,
    order,
    healthyAfterMs: undefined,
    lastServerStartMs: undefined,
    readyAfterLastServerMs: undefined,
    dropAfterKafkaStopMs: undefined,
    returnAfterKafkaStartMs: undefined,
    unexpectedExits: [],
    shutdownCodes: [],
    errorLines: new Map(),
    failures: [],
    logDir,
  };
  const infraLine = (line: string) => progress(`  ${line}`);
  await infra('down', [], infraLine);

  const secret = randomBytes(32).toString('base64url');
  const services: ServiceProcess[] = specs(secret).map((spec) => spawnService(spec, logDir));
  const watches: ReadinessWatch[] = [];
  const noExit = () => {
    if (interrupted.aborted) throw new Error('interrupted');
    const exited = services.filter((s) => s.unexpectedExit);
    if (exited.length > 0)
      throw new ProcessExited(exited.map((s) => `${s.name} exited (${s.unexpectedExit?.code ?? s.unexpectedExit?.signal})`).join(', '));
  };
  const allReady = () => watches.every((w) => w.ready);

  try {
    // Listening and alive at once, not ready, and saying why.
    for (const service of services) {
      const healthyAt = await until(
        () =>
          fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(1_000) }).then(
            (r) => r.status === 200,
            () => false,
          ),
        HEALTHY_WITHIN_MS,
        noExit,
      );
      if (healthyAt === undefined) throw new Error(`${service.name}: /healthz not 200 within ${HEALTHY_WITHIN_MS / 1000} s`);
      result.healthyAfterMs = Math.max(result.healthyAfterMs ?? 0, healthyAt - service.spawnedAt);
      const other = await fetch(`${service.url}/v1/anything`);
      const body = (await other.json()) as { code?: unknown };
      if (other.status !== 503 || body.code !== 'SERVICE_UNAVAILABLE') {
        result.failures.push(
          `${service.name}: while starting, another route answered ${other.status} ${String(body.code)}, not 503 SERVICE_UNAVAILABLE`,
        );
      }
      watches.push(new ReadinessWatch(service.url));
    }
    await sleep(SERVERLESS_MS);
    noExit();
    for (const [service, watch] of services.map((s, i) => [s, watches[i]!] as const)) {
      const body = watch.firstNotReadyBody as { status?: unknown; checks?: unknown; reason?: unknown } | undefined;
      if (watch.ready || body?.status !== 'not ready' || typeof body.checks !== 'object' || typeof body.reason !== 'string') {
        result.failures.push(`${service.name}: before any server /readyz was ${watch.ready ? 'ready' : JSON.stringify(body)}`);
      }
    }

    // The servers, one after another, in this run's order.
    let lastStartedAt = 0;
    for (const [i, server] of order.entries()) {
      if (i > 0) await sleep(PAUSE_BETWEEN_SERVERS_MS);
      noExit();
      progress(`  ${server} up`);
      lastStartedAt = Date.now();
      await infra('up', [server], infraLine);
    }
    const lastUpAt = Date.now();
    result.lastServerStartMs = lastUpAt - lastStartedAt;
    // The bound counts from the last server answering; the table shows the time from its start, which is stricter.
    const readyAt = await until(allReady, READY_WITHIN_MS, noExit);
    if (readyAt === undefined) {
      throw new Error(`not all ready within ${READY_WITHIN_MS / 1000} s of the last server: ${notReady(services, watches)}`);
    }
    result.readyAfterLastServerMs = Math.max(...watches.map((w) => w.firstAt(true, lastStartedAt)!)) - lastStartedAt;
    progress(`  all four ready ${(result.readyAfterLastServerMs / 1000).toFixed(1)} s after the last server's start`);

    await readThroughBothReplicas(services, secret, noExit);

    // Kafka restarted while they run: readiness drops, then returns by itself.
    progress('  kafka restart');
    const stopBegan = Date.now();
    await infra('stop', ['kafka'], infraLine);
    const droppedAt = await until(() => watches.every((w) => w.firstAt(false, stopBegan) !== undefined), DROP_WITHIN_MS, noExit);
    if (droppedAt === undefined) {
      throw new Error(
        `readiness did not drop within ${DROP_WITHIN_MS / 1000} s of stopping Kafka: ${stillReady(services, watches, stopBegan)}`,
      );
    }
    result.dropAfterKafkaStopMs = Math.max(...watches.map((w) => w.firstAt(false, stopBegan)! - stopBegan));
    const kafkaStartedAt = Date.now();
    await infra('up', ['kafka'], infraLine);
    // Back means back for good: all four ready and staying so for STABLE_MS (the read API may
    // return, then refuse again for a moment while its change feed re-joins: decision 29).
    const readySince = () => Math.max(...watches.map((w) => w.readySince() ?? Number.POSITIVE_INFINITY));
    const returnedAt = await until(() => Date.now() - readySince() >= STABLE_MS, RETURN_WITHIN_MS, noExit);
    if (returnedAt === undefined) {
      throw new Error(`readiness did not return for good within ${RETURN_WITHIN_MS / 1000} s of Kafka: ${notReady(services, watches)}`);
    }
    result.returnAfterKafkaStartMs = readySince() - kafkaStartedAt;
    progress(
      `  readiness dropped ${(result.dropAfterKafkaStopMs / 1000).toFixed(1)} s after the stop began, ` +
        `back ${(result.returnAfterKafkaStartMs / 1000).toFixed(1)} s after Kafka's start began`,
    );
    await readThroughBothReplicas(services, secret, noExit);
  } catch (error) {
    if (!(error instanceof ProcessExited)) result.failures.push(error instanceof Error ? error.message : String(error));
  } finally {
    await Promise.all(watches.map((w) => w.stop()));
    for (const service of services) {
      if (service.unexpectedExit) {
        result.unexpectedExits.push(`${service.name} (${describe(service.unexpectedExit)})`);
        result.failures.push(`${service.name} exited on its own (${describe(service.unexpectedExit)}):\n${logTail(service.logFile)}`);
      }
    }
    result.shutdownCodes = await Promise.all(services.map(async (s) => `${s.name} ${describe(await s.stop())}`));
    for (const service of services) {
      for (const [message, count] of errorLines(service.logFile)) result.errorLines.set(`${service.name}: ${message}`, count);
    }
  }
  return result;
}

function describe(exit: Exit): string {
  return exit.signal ? `signal ${exit.signal}` : `exit ${exit.code}`;
}

function notReady(services: ServiceProcess[], watches: ReadinessWatch[]): string {
  return services
    .filter((_s, i) => !watches[i]?.ready)
    .map((s) => `${s.name} not ready\n${logTail(s.logFile, 8)}`)
    .join('\n');
}

function stillReady(services: ServiceProcess[], watches: ReadinessWatch[], since: number): string {
  return services
    .filter((_s, i) => watches[i]?.firstAt(false, since) === undefined)
    .map((s) => `${s.name} stayed ready`)
    .join(', ');
}

/**
 * Ready must mean working: an authorization created, a score posted, and both replicas serving it.
 * Each call of this makes its own credential and score date.
 */
async function readThroughBothReplicas(services: ServiceProcess[], secret: string, abort: () => void): Promise<void> {
  const [credentials, scoreIngest, ...readApis] = services as [ServiceProcess, ServiceProcess, ...ServiceProcess[]];
  const token = await signDevToken(secret, { org: ORG, scope: 'authorizations:write scores:write' });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const created = await fetch(`${credentials.url}/v1/organizations/${ORG}/authorizations`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ recipientType: 'auditor', scopes: ['qr_score'] }),
  });
  if (created.status !== 201) throw new Error(`creating an authorization answered ${created.status}: ${await created.text()}`);
  const { clientId, apiKey } = (await created.json()) as { clientId: string; apiKey: string };
  const scoreDate = new Date(Date.now() - Math.floor(Math.random() * 1000) * 86_400_000).toISOString().slice(0, 10);
  const posted = await fetch(`${scoreIngest.url}/v1/scores`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      organizationId: ORG,
      scoreDate,
      score: 72,
      grade: 'Strengthen',
      pillarScores: { structuralIntegrity: 70, failureResistance: 75, deviceHealth: 68, recoveryCapability: 77 },
    }),
  });
  if (posted.status !== 202) throw new Error(`posting a score answered ${posted.status}: ${await posted.text()}`);
  for (const replica of readApis) {
    let last = 0;
    const served = await until(
      async () => {
        const answer = await fetch(`${replica.url}/v1/customers/${clientId}/score`, { headers: { 'x-api-key': apiKey } });
        last = answer.status;
        await answer.arrayBuffer();
        return answer.status === 200;
      },
      20_000,
      abort,
    );
    if (served === undefined) throw new Error(`${replica.name} did not serve the new credential's score within 20 s (last answer ${last})`);
  }
}
