// A service's public surface is its module and its configuration: composition roots reach no further.
export { credentialsConfigSchema, type CredentialsConfig } from './config';
export { createCredentialsModule, type CredentialsModule, type CredentialsModuleDeps } from './credentials-module';
