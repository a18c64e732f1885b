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
import { credentialsConfigSchema } from './config';
import { createCredentialsModule } from './credentials-module';

/** The credentials service: authorizations in its own store, their events relayed to the event log. */
async function main(): Promise<void> {
  const [service, runtimeSettings, http] = loadConfigs(
    [credentialsConfigSchema, runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'mongo'] }), httpServerConfigSchema],
    process.env,
  );
  const config = { ...service, ...runtimeSettings };
  const log = createLogger('credentials', config.LOG_LEVEL);
  const runtime = await openRuntime(config, 'credentials', log);
  const credentials = await createCredentialsModule({ config, runtime, clock: systemClock, log });
  const server = await listen(credentials.app, config.CREDENTIALS_PORT, config.CREDENTIALS_HOST, {
    limits: httpServerLimits(http),
    log,
  });
  log.info({ port: config.CREDENTIALS_PORT, runtime: runtime.kind }, 'credentials service listening');

  onShutdown(log, [() => closeServer(server), () => credentials.stop(), () => runtime.close()], config.SHUTDOWN_DEADLINE_MS);
}

runMain(main);
