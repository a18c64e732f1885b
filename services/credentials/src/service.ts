import { DEV_JWT_SECRET, SIGNING_KEYS_SECRET } from '@rsd/platform';
import type { ServiceDefinition } from '@rsd/ports';
import { credentialsConfigSchema, type CredentialsConfig } from './config';
import { createCredentialsModule, type CredentialsModule } from './credentials-module';

/** The credentials service: authorizations in its own store, their events relayed to the event log: the API alone (the console is a service of its own). */
export const credentialsService: ServiceDefinition<CredentialsConfig, CredentialsModule> = {
  name: 'credentials',
  configSchema: credentialsConfigSchema,
  needs: ['kafka', 'mongo'],
  secrets: [DEV_JWT_SECRET, SIGNING_KEYS_SECRET],
  listenOn: (config) => ({ port: config.CREDENTIALS_PORT, host: config.CREDENTIALS_HOST }),
  connectionShare: 0.1,
  start: createCredentialsModule,
};
