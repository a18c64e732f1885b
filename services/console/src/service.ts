import { CONSOLE_SIGNING_KEY } from '@rsd/platform';
import type { ServiceDefinition } from '@rsd/ports';
import { consoleServiceConfigSchema, type ConsoleServiceConfig } from './config';
import { createConsoleModule, type ConsoleModule } from './console-module';
import { CONSOLE_SESSION_KEY } from './console/console-sessions';

/**
 * The console (decisions 30-32, 51): pages for an organization's administrators and the claim pages
 * for recipients, over the credentials service's and the notifier's APIs. It needs no engine: any
 * number of replicas, none holding state another needs.
 */
export const consoleService: ServiceDefinition<ConsoleServiceConfig, ConsoleModule> = {
  name: 'console',
  configSchema: consoleServiceConfigSchema,
  needs: [],
  secrets: [CONSOLE_SIGNING_KEY, CONSOLE_SESSION_KEY],
  listenOn: (config) => ({ port: config.CONSOLE_PORT, host: config.CONSOLE_HOST }),
  connectionShare: 0.1,
  start: createConsoleModule,
};
