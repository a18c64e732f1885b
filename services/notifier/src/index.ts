// A service's public surface is its module and its configuration: composition roots reach no further.
export { notifierConfigSchema, type NotifierConfig } from './config';
export { createNotifierModule, type NotifierModule, type NotifierModuleDeps } from './notifier-module';
