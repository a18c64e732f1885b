// A service's public surface is its module and its configuration: composition roots reach no further.
export { readApiConfigSchema, type ReadApiConfig } from './config';
export { createReadApiModule, type ReadApiModule, type ReadApiModuleDeps } from './read-api-module';
export type { ResponseSigner } from './signing/response-signer';
