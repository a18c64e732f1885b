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
import { scoreIngestConfigSchema } from './config';
import { createScoreIngestModule } from './score-ingest-module';

/** The score-ingest service: validates scores from the scoring engines and appends them to the event log. */
async function main(): Promise<void> {
  const [service, runtimeSettings, http] = loadConfigs(
    [scoreIngestConfigSchema, runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka'] }), httpServerConfigSchema],
    process.env,
  );
  const config = { ...service, ...runtimeSettings };
  const log = createLogger('score-ingest', config.LOG_LEVEL);
  const runtime = await openRuntime(config, 'score-ingest', log);
  const scoreIngest = await createScoreIngestModule({ config, runtime, clock: systemClock, log });
  const server = await listen(scoreIngest.app, config.SCORE_INGEST_PORT, config.SCORE_INGEST_HOST, {
    limits: httpServerLimits(http),
    log,
  });
  log.info({ port: config.SCORE_INGEST_PORT, runtime: runtime.kind }, 'score-ingest service listening');

  onShutdown(log, [() => closeServer(server), () => scoreIngest.stop(), () => runtime.close()], config.SHUTDOWN_DEADLINE_MS);
}

runMain(main);
