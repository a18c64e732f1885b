// A service's public surface is its declaration (what the runner runs), its module and its configuration.
export { readApiConfigSchema, type ReadApiConfig } from './config';
export { createReadApiModule, type ReadApiModuleDeps } from './read-api-module';
export type { ResponseSigner } from './signing/response-signer';
export { readApiService } from './service';
