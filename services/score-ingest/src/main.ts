import { createServiceMetrics } from '@rsd/observability';
import { closeServer, createLogger, createTokenVerifier, listen, loadConfigs, onShutdown, runMain } from '@rsd/platform';
import { systemClock } from '@rsd/ports';
import { openRuntime, runtimeConfigSchema } from '@rsd/runtime';
import { buildApp } from './app';
import { scoreIngestConfigSchema } from './config';

/** The score-ingest service: validates scores from the scoring engines and appends them to the event log. */
async function main(): Promise<void> {
  const [service, runtimeSettings] = loadConfigs(
    [scoreIngestConfigSchema, runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka'] })],
    process.env,
  );
  const config = { ...service, ...runtimeSettings };
  const log = createLogger('score-ingest', config.LOG_LEVEL);
  const runtime = await openRuntime(config, 'score-ingest', log);

  const app = buildApp({
    config,
    eventLog: runtime.eventLog,
    clock: systemClock,
    log,
    verifyToken: createTokenVerifier(config),
    operations: { metrics: createServiceMetrics('score-ingest'), readiness: runtime.readiness() },
  });
  const server = await listen(app, config.SCORE_INGEST_PORT, config.SCORE_INGEST_HOST);
  log.info({ port: config.SCORE_INGEST_PORT, runtime: runtime.kind }, 'score-ingest service listening');

  onShutdown(log, [() => closeServer(server), () => runtime.close()], config.SHUTDOWN_DEADLINE_MS);
}

runMain(main);
