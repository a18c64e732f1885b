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
import { credentialsConfigSchema } from './config';
import { createCredentialsModule } from './credentials-module';

/**
 * The credentials service: authorizations in its own store, their events relayed to the event log.
 * It listens at once and waits for Kafka and MongoDB in whatever order they come.
 */
async function main(): Promise<void> {
  const [service, runtimeSettings, http] = loadConfigs(
    [credentialsConfigSchema, runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'mongo'] }), httpServerConfigSchema],
    process.env,
  );
  const config = { ...service, ...runtimeSettings };
  const log = createLogger('credentials', config.LOG_LEVEL);
  const server = await listenWhileStarting(config.CREDENTIALS_PORT, config.CREDENTIALS_HOST, { limits: httpServerLimits(http), log });
  log.info({ port: config.CREDENTIALS_PORT, runtime: config.RUNTIME }, 'credentials service accepting connections while it starts');

  const start = startWithRetries(
    async (scope) => {
      const runtime = await openRuntime(config, 'credentials', log);
      scope.closeOnStop(() => runtime.close());
      const credentials = await createCredentialsModule({ config, runtime, clock: systemClock, log });
      scope.closeOnStop(() => credentials.stop());
      return credentials.app;
    },
    { log, deadlineMs: config.START_DEADLINE_MS, dependencyOf, onFailedAttempt: (failure) => server.attemptFailed(failure) },
  );
  onShutdown(log, [() => closeServer(server.server), () => start.stop()], config.SHUTDOWN_DEADLINE_MS);

  server.serve(await start.started);
  log.info({ port: config.CREDENTIALS_PORT, runtime: config.RUNTIME }, 'credentials service started and listening');
}

runMain(main);
