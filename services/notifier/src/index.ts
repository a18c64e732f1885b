// A service's public surface is its declaration (what the runner runs), its module and its configuration.
export { notifierConfigSchema, type NotifierConfig } from './config';
export { createNotifierModule, type NotifierModuleDeps } from './notifier-module';
export { notifierService } from './service';
export { documentedWebhookOwners } from './webhooks/documented-owners';
