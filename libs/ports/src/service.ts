import type { Tracer } from '@opentelemetry/api';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Clock } from './clock';
import type { Runtime } from './runtime';

/** A server a service needs on a runtime of servers: a missing address is a configuration error. */
export type Need = 'kafka' | 'mongo' | 'redis';

/**
 * A service, declared once: what it is called, what it reads from the environment, which servers it
 * needs, where it listens and how it starts on a runtime. The runner runs one declaration (its own
 * process, `services/<name>/src/main.ts`) or several in one process (the embedded runtime) the same
 * way: listening at once, starting with retries, readiness, metrics and shutdown are the runner's.
 */
export interface ServiceDefinition<Config = unknown, Running extends RunningService = RunningService> {
  /** In logs and metrics: `read-api`. */
  name: string;
  configSchema: z.ZodType<Config>;
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
  /** The service's own configuration: the runtime's settings are the runtime's. */
  config: Config;
  runtime: Runtime;
  clock: Clock;
  log: Logger;
  /**
   * The service's tracer when tracing is on (decision 39), for spans of its own work beyond requests and
   * events (the notifier's delivery attempts); undefined when off, so that nothing is traced or paid for.
   */
  tracer?: Tracer | undefined;
  /**
   * The loopback URL of another service this process runs, by its name (`notifier`), already
   * listening; undefined where it runs in another process. Configuration names the others.
   */
  localUrlOf?(serviceName: string): string | undefined;
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

/**
 * A secret a service reads from its configuration. In production it comes from the orchestrator's
 * secrets; a runtime with a data directory (embedded) makes it once into that directory instead, so
 * `npm start` needs no set-up and a restart keeps the keys it published.
 */
export interface SecretSpec {
  /** The environment variable that carries it. */
  variable: string;
  /** Its file in the data directory (mode 0600, never in the repository). */
  file: string;
  /** A new value, made once. */
  generate(): string;
  /** Not made while one of these is set: they configure an alternative (JWT_JWKS_URL to the development JWT secret). */
  unlessSet?: readonly string[];
  /**
   * Why it cannot be left out where nothing is generated, for the configuration error; without it the
   * service's own configuration decides (the JWT secret has an alternative).
   */
  requiredBecause?: string;
}
