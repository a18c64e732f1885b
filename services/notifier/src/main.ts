import { runMain } from '@rsd/platform';
import { runServices } from '@rsd/runtime';
import { notifierService } from './service';

/**
 * The notifier on the distributed runtime (one replica); it listens at once and waits for Kafka,
 * MongoDB and Redis in whatever order they come.
 */
runMain(async () => {
  await runServices([notifierService], { name: 'notifier', env: process.env });
});
