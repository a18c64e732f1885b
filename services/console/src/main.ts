import { runMain } from '@rsd/platform';
import { runServices } from '@rsd/runtime';
import { consoleService } from './service';

/**
 * The console on the distributed runtime: the project's one runner (configuration, secrets from
 * `_FILE`, signals, traces), for a service that needs no engine and opens none.
 */
runMain(async () => {
  await runServices([consoleService], { name: 'console', env: process.env });
});
