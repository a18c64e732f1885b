import {
  closeServer,
  createLogger,
  httpServerConfigSchema,
  httpServerLimits,
  listen,
  loadConfigs,
  onShutdown,
  runMain,
} from '@rsd/platform';
import { systemClock } from '@rsd/ports';
import { openRuntime, runtimeConfigSchema } from '@rsd/runtime';
import { readApiConfigSchema } from './config';
import { createReadApiModule } from './read-api-module';

/** One read-API replica: projects the topics into the shared views and serves them. */
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
  const log = createLogger('read-api', config.LOG_LEVEL);
  const runtime = await openRuntime(config, 'read-api', log);
  const readApi = await createReadApiModule({ config, runtime, clock: systemClock, log });
  const server = await listen(readApi.app, config.READ_API_PORT, config.READ_API_HOST, {
    limits: httpServerLimits(http),
    log,
  });
  log.info({ port: config.READ_API_PORT, runtime: runtime.kind }, 'read API listening');

  onShutdown(log, [() => closeServer(server), () => readApi.stop(), () => runtime.close()], config.SHUTDOWN_DEADLINE_MS);
}

runMain(main);
