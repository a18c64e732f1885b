import { DEV_JWT_SECRET, type ServiceDefinition } from '@rsd/runtime';
import { credentialsConfigSchema, type CredentialsConfig } from './config';
import { createCredentialsModule, type CredentialsModule } from './credentials-module';

/** The credentials service: authorizations in its own store, their events relayed to the event log, and the console. */
export const credentialsService: ServiceDefinition<CredentialsConfig, CredentialsModule> = {
  name: 'credentials',
  configSchema: credentialsConfigSchema,
  needs: ['kafka', 'mongo'],
  secrets: [DEV_JWT_SECRET],
  listenOn: (config) => ({ port: config.CREDENTIALS_PORT, host: config.CREDENTIALS_HOST }),
  connectionShare: 0.2,
  start: createCredentialsModule,
};
