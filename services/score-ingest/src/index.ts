export { buildApp, type ScoreIngestAppDeps } from './app';
export { scoreIngestConfigSchema, type ScoreIngestConfig } from './config';
export { scoreIngestOpenApi } from './openapi';
export { createScoreIngestModule, type ScoreIngestModuleDeps } from './score-ingest-module';
