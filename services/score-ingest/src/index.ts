// A service's public surface is its module and its configuration: composition roots reach no further.
export { scoreIngestConfigSchema, type ScoreIngestConfig } from './config';
export { createScoreIngestModule, type ScoreIngestModuleDeps } from './score-ingest-module';
