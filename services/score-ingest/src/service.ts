import { DEV_JWT_SECRET } from '@rsd/platform';
import type { ServiceDefinition } from '@rsd/ports';
import { scoreIngestConfigSchema, type ScoreIngestConfig } from './config';
import { createScoreIngestModule } from './score-ingest-module';

/** The score-ingest service: validates the scoring engines' scores and appends them to the event log. */
export const scoreIngestService: ServiceDefinition<ScoreIngestConfig> = {
  name: 'score-ingest',
  configSchema: scoreIngestConfigSchema,
  needs: ['kafka', 'mongo'],
  secrets: [DEV_JWT_SECRET],
  listenOn: (config) => ({ port: config.SCORE_INGEST_PORT, host: config.SCORE_INGEST_HOST }),
  connectionShare: 0.2,
  start: createScoreIngestModule,
};
