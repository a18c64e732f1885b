export { buildApp, type ReadApiDeps } from './app';
export { readApiConfigSchema, type ReadApiConfig } from './config';
export { readApiOpenApi } from './openapi';
export { startProjections, type DeadLetter, type ProjectionDeps } from './projections/projection-runner';
export { createCachedViewStore, type CachedViewStore, type CachedViewStoreOptions } from './views/cached-view-store';
export { startChangeFeed } from './views/view-change-feed';
export { createReadApiModule, type ReadApiModule, type ReadApiModuleDeps } from './read-api-module';
