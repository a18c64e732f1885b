import { CONSOLE_NOTIFIER_SECRET, DEV_JWT_SECRET } from '@rsd/platform';
import type { ServiceDefinition } from '@rsd/ports';
import { credentialsConfigSchema, type CredentialsConfig } from './config';
import { createCredentialsModule, type CredentialsModule } from './credentials-module';

/** The credentials service: authorizations in its own store, their events relayed to the event log, and the console. */
export const credentialsService: ServiceDefinition<CredentialsConfig, CredentialsModule> = {
  name: 'credentials',
  configSchema: credentialsConfigSchema,
  needs: ['kafka', 'mongo'],
  secrets: [DEV_JWT_SECRET, CONSOLE_NOTIFIER_SECRET],
  listenOn: (config) => ({ port: config.CREDENTIALS_PORT, host: config.CREDENTIALS_HOST }),
  connectionShare: 0.2,
  start: createCredentialsModule,
};
