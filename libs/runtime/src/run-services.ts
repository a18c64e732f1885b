import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Tracer } from '@opentelemetry/api';
import { tracedEventLog, type EventLogSystem } from '@rsd/consumers';
import { tracedRequests } from '@rsd/observability';
import {
  closeServer,
  createLogger,
  env as variables,
  httpServerConfigSchema,
  httpServerLimits,
  listenWhileStarting,
  loadConfig,
  loadConfigs,
  onShutdown,
  portOf,
  serviceLogger,
  startWithRetries,
  type Logger,
  systemClock,
} from '@rsd/platform';
import type { AnyServiceDefinition, Clock, Runtime, RunningService, SecretSpec, ServiceDefinition } from '@rsd/ports';
import { dependencyOf } from './dependency-of';
import { failingOnRefusal } from './engine-refusal';
import { tuneHeapForServing } from './heap-tuning';
import { openRuntime, type OpenedRuntime } from './open-runtime';
import { runtimeConfigSchema, type RuntimeKind } from './runtime-config';
import { resolveSecrets } from './secrets';
import { startTracing, tracesEndpointOf, tracingConfigSchema } from './tracing';

export interface RunOptions {
  /** The process's name in its log: the service's own, or `embedded` for all four. */
  name: string;
  /** RUNTIME when the environment does not say; a service's own process is distributed unless told. */
  defaultRuntime?: RuntimeKind;
  env: NodeJS.ProcessEnv;
  clock?: Clock;
}

/** The services of a process once every one of them serves. */
export interface RunningProcess {
  /** The environment the services were configured from, the runtime's secrets included. */
  env: NodeJS.ProcessEnv;
  /** Secrets made into the data directory by this start (a first start). */
  createdSecrets: readonly string[];
  runtime: RuntimeKind;
  /** DATA_DIR, absolute; undefined on the distributed runtime. */
  dataDir: string | undefined;
  log: Logger;
  /** `http://host:port` of a service: loopback when it listens on every address. */
  urlOf(definition: AnyServiceDefinition): string;
  service<Config, Running extends RunningService>(definition: ServiceDefinition<Config, Running>): Running;
}

const processConfigSchema = z.object({ LOG_LEVEL: variables.logLevel() });

/** How long SIGTERM lets keep-alive clients be told to go before their idle connections are dropped (closeServer). */
const SHUTDOWN_DRAIN_MS = 1_000;

/**
 * Runs services in this process: each listens at once (answering 503 and /readyz with what it
 * waits for), then the runtime opens and each service starts, all retried until the servers they
 * need answer (only a configuration error, or on the embedded runtime any error, ends it), then
 * each serves. SIGTERM and SIGINT stop the servers, then the services, then export the last spans,
 * within SHUTDOWN_DEADLINE_MS. With an OTLP endpoint in the environment (decision 39) every request is
 * a span of its service; without one, nothing of tracing is set up.
 */
export async function runServices(definitions: readonly AnyServiceDefinition[], options: RunOptions): Promise<RunningProcess> {
  const { name, env, clock = systemClock } = options;
  tuneHeapForServing();
  const needs = [...new Set(definitions.flatMap((definition) => definition.needs))];
  const runtimeSettings = loadConfig(runtimeConfigSchema({ defaultRuntime: options.defaultRuntime ?? 'distributed', needs }), env);
  const [{ LOG_LEVEL }, tracingConfig] = loadConfigs([processConfigSchema, tracingConfigSchema], env);
  const log = createLogger(name, LOG_LEVEL, undefined, { traceIds: tracesEndpointOf(tracingConfig) !== undefined });
  const tracing = startTracing(tracingConfig, {
    services: definitions.map((definition) => definition.name),
    process: name,
    // The clients' instrumentations (Kafka, MongoDB, Redis) only where the process has those clients.
    instrumentClients: runtimeSettings.RUNTIME === 'distributed',
    log,
  });
  const dataDir = runtimeSettings.RUNTIME === 'embedded' ? resolve(runtimeSettings.DATA_DIR) : undefined;
  if (dataDir) await mkdir(dataDir, { recursive: true, mode: 0o700 });

  const secrets = uniqueByVariable(definitions.flatMap((definition) => definition.secrets ?? []));
  const { env: configured, created } = await resolveSecrets(secrets, env, dataDir, log);
  const [http, ...parsed] = loadConfigs([httpServerConfigSchema, ...definitions.map((definition) => definition.configSchema)], configured);
  // Each definition's own configuration, parsed by its own schema: only it reads it.
  const configs: object[] = parsed.map((config) => config as object);
  const alone = definitions.length === 1;
  // One service alone logs as the process; several in one process each under their own name.
  const logOf = (definition: AnyServiceDefinition) => (alone ? log : serviceLogger(log, definition.name));

  const servers = await Promise.all(
    definitions.map(async (definition, index) => {
      const { port, host } = definition.listenOn(configs[index]);
      const limits = httpServerLimits(http, alone ? 1 : definition.connectionShare);
      const server = await listenWhileStarting(port, host, { limits, log: logOf(definition) });
      logOf(definition).info(
        { port: portOf(server.server), runtime: runtimeSettings.RUNTIME },
        `${definition.name} accepting connections while it starts`,
      );
      return { server, host };
    }),
  );

  const urlAt = (index: number): string => {
    const { server, host } = servers[index]!;
    return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${portOf(server.server)}`;
  };

  const start = startWithRetries(
    // An engine that refuses this process's certificate authority or credentials ends the start: no retry mends it.
    (scope) =>
      failingOnRefusal(async () => {
        // Services that need no engine (the console) open none on the distributed runtime: no connection, no secret.
        const engineFree = needs.length === 0 && runtimeSettings.RUNTIME === 'distributed';
        const runtime = engineFree
          ? engineFreeRuntime()
          : await openRuntime({ ...runtimeSettings, DATA_DIR: dataDir ?? runtimeSettings.DATA_DIR }, name, log);
        scope.closeOnStop(() => runtime.close());
        const running: RunningService[] = [];
        for (const [index, definition] of definitions.entries()) {
          const tracer = tracing.tracerOf(definition.name);
          const service = await definition.start({
            config: configs[index],
            runtime:
              tracer && !engineFree
                ? tracedRuntime(runtime, tracer, runtimeSettings.RUNTIME === 'distributed' ? 'kafka' : 'sqlite')
                : runtime,
            clock,
            log: logOf(definition),
            tracer,
            localUrlOf: (serviceName) => {
              const other = definitions.findIndex((candidate) => candidate.name === serviceName);
              return other === -1 ? undefined : urlAt(other);
            },
          });
          scope.closeOnStop(() => service.stop());
          // Views in this process catch up before the first request; shared views say it on /readyz instead.
          if (runtime.viewsInProcess) await service.caughtUp;
          running.push(service);
        }
        return running;
      }),
    {
      log,
      deadlineMs: runtimeSettings.START_DEADLINE_MS,
      dependencyOf,
      // The embedded runtime waits for no server: a failure there is not one a retry mends.
      isFatal: () => runtimeSettings.RUNTIME === 'embedded',
      onFailedAttempt: (failure) => servers.forEach(({ server }) => server.attemptFailed(failure)),
    },
  );
  onShutdown(
    log,
    [
      // Keep-alive clients get a second to be told to go (an answer with `Connection: close`) before
      // the idle connections are dropped: no request of theirs is lost on a connection closed under it.
      () => Promise.all(servers.map(({ server }) => closeServer(server.server, SHUTDOWN_DRAIN_MS))).then(() => undefined),
      () => start.stop(),
      () => tracing.shutdown(),
    ],
    runtimeSettings.SHUTDOWN_DEADLINE_MS,
  );

  const running = await start.started;
  servers.forEach(({ server }, index) => {
    const { app } = running[index]!;
    const tracer = tracing.tracerOf(definitions[index]!.name);
    server.serve(tracer ? tracedRequests(app, tracer) : app);
  });
  for (const [index, definition] of definitions.entries()) {
    logOf(definition).info(
      { port: portOf(servers[index]!.server.server), runtime: runtimeSettings.RUNTIME, ...(dataDir ? { dataDir } : {}) },
      `${definition.name} started and listening`,
    );
  }

  const indexOf = (definition: AnyServiceDefinition): number => {
    const index = definitions.indexOf(definition);
    if (index === -1) throw new Error(`${definition.name} does not run in this process`);
    return index;
  };
  return {
    env: configured,
    createdSecrets: created,
    runtime: runtimeSettings.RUNTIME,
    dataDir,
    log,
    urlOf: (definition) => urlAt(indexOf(definition)),
    // The definition started this service, so it returned its own Running.
    service: <Config, Running extends RunningService>(definition: ServiceDefinition<Config, Running>) =>
      running[indexOf(definition as AnyServiceDefinition)] as Running,
  };
}

/** The runtime as a traced service sees it: its appends and deliveries are spans of its own (decision 39). */
function tracedRuntime(runtime: OpenedRuntime, tracer: Tracer, system: EventLogSystem): Runtime {
  return runtime.withEventLog(tracedEventLog(runtime.eventLog, tracer, system));
}

function uniqueByVariable(specs: readonly SecretSpec[]): SecretSpec[] {
  return [...new Map(specs.map((spec) => [spec.variable, spec])).values()];
}

/**
 * The runtime of a process whose services declared no engine: it holds nothing to close, and any use of
 * an engine is a programming error that names itself rather than a connection attempt.
 */
function engineFreeRuntime(): OpenedRuntime {
  const held: Partial<Record<PropertyKey, unknown>> = { close: () => Promise.resolve(), viewsInProcess: false, then: undefined };
  return new Proxy(held, {
    get: (target, property) => {
      if (property in target) return target[property];
      throw new Error(`this process's services declared no engine, so the runtime has no ${String(property)}`);
    },
  }) as unknown as OpenedRuntime;
}
