import { createServiceMetrics } from '@rsd/observability';
import { createTokenVerifier, type Logger } from '@rsd/platform';
import type { Clock, RunningService, Runtime } from '@rsd/ports';
import { buildApp } from './app';
import type { ScoreIngestConfig } from './config';

export interface ScoreIngestModuleDeps {
  config: ScoreIngestConfig;
  runtime: Runtime;
  clock: Clock;
  log: Logger;
}

/** The score-ingest service: validates scores from the scoring engines and appends them to the event log. */
export function createScoreIngestModule({ config, runtime, clock, log }: ScoreIngestModuleDeps): Promise<RunningService> {
  const app = buildApp({
    config,
    eventLog: runtime.eventLog,
    clock,
    log,
    verifyToken: createTokenVerifier(config),
    operations: { metrics: createServiceMetrics('score-ingest'), readiness: runtime.readiness() },
  });
  return Promise.resolve({ app, stop: () => Promise.resolve() });
}
