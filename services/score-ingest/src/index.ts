export { buildApp, type ScoreIngestAppDeps } from './app';
export { scoreIngestConfigSchema, type ScoreIngestConfig } from './config';
export { scoreIngestOpenApi } from './openapi';
