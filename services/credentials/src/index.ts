// A service's public surface is its declaration (what the runner runs), its module and its configuration.
export { credentialsConfigSchema, type CredentialsConfig } from './config';
export { createCredentialsModule, type CredentialsModule, type CredentialsModuleDeps } from './credentials-module';
export { credentialsService } from './service';
