import { runMain } from '@rsd/platform';
import { runServices } from '@rsd/runtime';
import { credentialsService } from './service';

/**
 * The credentials service on the distributed runtime; it listens at once and waits for Kafka and
 * MongoDB in whatever order they come.
 */
runMain(async () => {
  await runServices([credentialsService], { name: 'credentials', env: process.env });
});
