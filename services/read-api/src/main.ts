import {
  closeServer,
  createLogger,
  httpServerConfigSchema,
  httpServerLimits,
  listenWhileStarting,
  loadConfigs,
  onShutdown,
  runMain,
  startWithRetries,
} from '@rsd/platform';
import { systemClock } from '@rsd/ports';
import { dependencyOf, openRuntime, runtimeConfigSchema } from '@rsd/runtime';
import { readApiConfigSchema } from './config';
import { assertSigningKeysConfigured, createReadApiModule } from './read-api-module';

/**
 * One read-API replica: projects the topics into the shared views and serves them. It listens at
 * once and waits for Kafka, MongoDB and Redis in whatever order they come (docs/decisions.md,
 * "Starting in any order").
 */
async function main(): Promise<void> {
  const [service, runtimeSettings, http] = loadConfigs(
    [
      readApiConfigSchema,
      runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'mongo', 'redis'] }),
      httpServerConfigSchema,
    ],
    process.env,
  );
  const config = { ...service, ...runtimeSettings };
  assertSigningKeysConfigured(config, config.RUNTIME);
  const log = createLogger('read-api', config.LOG_LEVEL);
  const server = await listenWhileStarting(config.READ_API_PORT, config.READ_API_HOST, { limits: httpServerLimits(http), log });
  log.info({ port: config.READ_API_PORT, runtime: config.RUNTIME }, 'read API accepting connections while it starts');

  const start = startWithRetries(
    async (scope) => {
      const runtime = await openRuntime(config, 'read-api', log);
      scope.closeOnStop(() => runtime.close());
      const readApi = await createReadApiModule({ config, runtime, clock: systemClock, log });
      scope.closeOnStop(() => readApi.stop());
      return readApi.app;
    },
    { log, deadlineMs: config.START_DEADLINE_MS, dependencyOf, onFailedAttempt: (failure) => server.attemptFailed(failure) },
  );
  onShutdown(log, [() => closeServer(server.server), () => start.stop()], config.SHUTDOWN_DEADLINE_MS);

  server.serve(await start.started);
  log.info({ port: config.READ_API_PORT, runtime: config.RUNTIME }, 'read API started and listening');
}

runMain(main);
