import { z } from 'zod';
import { createLogger, env as variables, loadConfigs, type Logger } from '@rsd/platform';
import type { Need, Runtime } from '@rsd/ports';
import { failingOnRefusal } from './engine-refusal';
import { openRuntime } from './open-runtime';
import { runtimeConfigSchema, type RuntimeConfig, type RuntimeKind } from './runtime-config';

export interface TaskOptions {
  /** In its log, and its client's name at the servers. */
  name: string;
  needs: readonly Need[];
  env: NodeJS.ProcessEnv;
  /** RUNTIME when the environment does not say. */
  defaultRuntime?: RuntimeKind;
  /** Settings the task gives the runtime on top of the environment's (a rebuild's new views database). */
  settings?: (configured: RuntimeConfig) => Partial<RuntimeConfig>;
}

/** Runs a one-off task (not a server) on a runtime opened for it from the environment, and closes the runtime after. */
export async function runTask<T>(options: TaskOptions, task: (context: { runtime: Runtime; log: Logger }) => Promise<T>): Promise<T> {
  return runConfiguredTask(options, async ({ config, log }) => {
    const runtime = await openRuntime(config, options.name, log);
    try {
      return await task({ runtime, log });
    } finally {
      await runtime.close();
    }
  });
}

/**
 * A one-off task that opens what it reaches itself, given the runtime's configuration from the
 * environment (checked, as a service's) and a log: a rewrite of the log's topics, which opening the
 * runtime would create when they are missing.
 */
export async function runConfiguredTask<T>(
  options: TaskOptions,
  task: (context: { config: RuntimeConfig; log: Logger }) => Promise<T>,
): Promise<T> {
  const [configured, { LOG_LEVEL }] = loadConfigs(
    [
      runtimeConfigSchema({ defaultRuntime: options.defaultRuntime ?? 'distributed', needs: options.needs }),
      z.object({ LOG_LEVEL: variables.logLevel() }),
    ],
    options.env,
  );
  const log = createLogger(options.name, LOG_LEVEL);
  return failingOnRefusal(() => task({ config: { ...configured, ...options.settings?.(configured) }, log }));
}
