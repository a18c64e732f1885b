import { runMain } from '@rsd/platform';
import { runConfiguredTask, sealDistributedLog } from '@rsd/runtime';

/**
 * Rewrites the distributed log's topics with their events written before sealing sealed (decision 56),
 * every service stopped, then exits:
 *   node services/read-api/dist/seal-log/main.js
 * The report on stdout (JSON), the progress on stderr; run again after a failure, it takes up where it stopped.
 */
runMain(async () => {
  const result = await runConfiguredTask({ name: 'seal-log', needs: ['kafka', 'mongo'], env: process.env }, ({ config, log }) =>
    sealDistributedLog(config, log, { progress: (line) => process.stderr.write(`seal-log: ${line}\n`) }),
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
});
