export { buildApp, type ReadApiDeps } from './app';
export { readApiConfigSchema, type ReadApiConfig } from './config';
export { readApiOpenApi } from './openapi';
export { startProjections, type DeadLetter, type ProjectionDeps } from './projections/projection-runner';
