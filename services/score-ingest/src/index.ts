// A service's public surface is its declaration (what the runner runs), its module and its configuration.
export { scoreIngestConfigSchema, type ScoreIngestConfig } from './config';
export { createScoreIngestModule, type ScoreIngestModuleDeps } from './score-ingest-module';
export { scoreIngestService } from './service';
