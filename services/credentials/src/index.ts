export { buildApp, type CredentialsAppDeps } from './app';
export { credentialsConfigSchema, type CredentialsConfig } from './config';
export { createOutboxRelay, type OutboxRelay, type OutboxRelayDeps } from './outbox/outbox-relay';
export { createExpiryScheduler, type ExpiryScheduler, type ExpirySchedulerDeps } from './expiry/expiry-scheduler';
export { credentialsOpenApi } from './openapi';
export { createCredentialsModule, type CredentialsModuleDeps } from './credentials-module';
