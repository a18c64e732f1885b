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
import { scoreIngestConfigSchema } from './config';
import { createScoreIngestModule } from './score-ingest-module';

/**
 * The score-ingest service: validates scores from the scoring engines and appends them to the event
 * log. It listens at once and waits for Kafka.
 */
async function main(): Promise<void> {
  const [service, runtimeSettings, http] = loadConfigs(
    [scoreIngestConfigSchema, runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka'] }), httpServerConfigSchema],
    process.env,
  );
  const config = { ...service, ...runtimeSettings };
  const log = createLogger('score-ingest', config.LOG_LEVEL);
  const server = await listenWhileStarting(config.SCORE_INGEST_PORT, config.SCORE_INGEST_HOST, { limits: httpServerLimits(http), log });
  log.info({ port: config.SCORE_INGEST_PORT, runtime: config.RUNTIME }, 'score-ingest service accepting connections while it starts');

  const start = startWithRetries(
    async (scope) => {
      const runtime = await openRuntime(config, 'score-ingest', log);
      scope.closeOnStop(() => runtime.close());
      const scoreIngest = await createScoreIngestModule({ config, runtime, clock: systemClock, log });
      scope.closeOnStop(() => scoreIngest.stop());
      return scoreIngest.app;
    },
    { log, deadlineMs: config.START_DEADLINE_MS, dependencyOf, onFailedAttempt: (failure) => server.attemptFailed(failure) },
  );
  onShutdown(log, [() => closeServer(server.server), () => start.stop()], config.SHUTDOWN_DEADLINE_MS);

  server.serve(await start.started);
  log.info({ port: config.SCORE_INGEST_PORT, runtime: config.RUNTIME }, 'score-ingest service started and listening');
}

runMain(main);
