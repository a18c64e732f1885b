import { runMain } from '@rsd/platform';
import { runServices } from '@rsd/runtime';
import { readApiService } from './service';

/**
 * One read-API replica on the distributed runtime: projects the topics into the shared views and serves
 * them. It listens at once and waits for Kafka, MongoDB and Redis in whatever order they come
 * (docs/decisions/0103-starting-in-any-order.md).
 */
runMain(async () => {
  await runServices([readApiService], { name: 'read-api', env: process.env });
});
