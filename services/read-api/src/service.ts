import type { ServiceDefinition } from '@rsd/ports';
import { readApiConfigSchema, type ReadApiConfig } from './config';
import { createReadApiModule } from './read-api-module';
import { SIGNING_KEYS_SECRET } from '@rsd/platform';

/** The read API: recipients' reads, from views it projects from the event log (any number of replicas). */
export const readApiService: ServiceDefinition<ReadApiConfig> = {
  name: 'read-api',
  configSchema: readApiConfigSchema,
  needs: ['kafka', 'mongo', 'redis'],
  secrets: [SIGNING_KEYS_SECRET],
  listenOn: (config) => ({ port: config.READ_API_PORT, host: config.READ_API_HOST }),
  // Every recipient calls it: sharing a process, it keeps 40 % of the connections, the other three 20 % each.
  connectionShare: 0.4,
  start: createReadApiModule,
};
