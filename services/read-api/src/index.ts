export { buildApp, type ReadApiDeps } from './app';
export { readApiConfigSchema, type ReadApiConfig } from './config';
export { readApiOpenApi } from './openapi';
export { startProjections, type DeadLetter, type ProjectionDeps } from './projections/projection-runner';
export { createCachedReadViews, type CachedReadViewsOptions } from './views/cached-read-views';
export { startChangeFeed } from './views/view-change-feed';
