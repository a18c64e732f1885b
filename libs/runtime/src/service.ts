import type { Tracer } from '@opentelemetry/api';
import type { Express } from 'express';
import type { z } from 'zod';
import type { Logger } from '@rsd/platform';
import type { Clock } from '@rsd/ports';
import type { Runtime } from './open-runtime';
import type { Need, RuntimeConfig } from './runtime-config';
import type { SecretSpec } from './secrets';

/**
 * A service, declared once: what it is called, what it reads from the environment, which servers it
 * needs, where it listens and how it starts on a runtime. `runServices` runs one declaration (its own
 * process, `services/<name>/src/main.ts`) or several in one process (the embedded runtime) the same
 * way: listening at once, starting with retries, readiness, metrics and shutdown are the runner's.
 */
export interface ServiceDefinition<Config = unknown, Running extends RunningService = RunningService> {
  /** In logs and metrics: `read-api`. */
  name: string;
  configSchema: z.ZodType<Config>;
  /** The servers it uses on the distributed runtime: a missing address is a configuration error. */
  needs: readonly Need[];
  /** Secrets it reads from its configuration, which a runtime with a data directory generates once when unset. */
  secrets?: readonly SecretSpec[];
  listenOn(config: Config): { port: number; host: string };
  /** Its part of the process's connection cap when it shares a process (HTTP_MAX_CONNECTIONS). */
  connectionShare: number;
  /** Opens what it uses on the runtime and starts its background jobs; `stop` undoes it all. */
  start(context: ServiceContext<Config>): Promise<Running>;
}

export interface ServiceContext<Config> {
  config: Config & RuntimeConfig;
  runtime: Runtime;
  clock: Clock;
  log: Logger;
  /**
   * The service's tracer when tracing is on (decision 39), for spans of its own work beyond requests and
   * events (the notifier's delivery attempts); undefined when off, so that nothing is traced or paid for.
   */
  tracer?: Tracer | undefined;
}

export interface RunningService {
  app: Express;
  /**
   * Resolves once its projections have handled what the event log held when they started. Where the
   * views live in the process, the runner serves only after that; shared views say it on /readyz.
   */
  caughtUp?: Promise<void>;
  /** Stops its background work and closes what it opened (the server has stopped taking requests). */
  stop(): Promise<void>;
}

// The declarations differ in their configuration; the runner treats them alike.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the runner is generic over every service's Config
export type AnyServiceDefinition = ServiceDefinition<any, RunningService>;
