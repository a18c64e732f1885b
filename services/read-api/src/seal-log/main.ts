import { runMain } from '@rsd/platform';
import { runConfiguredTask, sealDistributedLog } from '@rsd/runtime';

/**
 * Rewrites the distributed log's topics with their events written before sealing sealed (decision 56),
 * every service stopped, then exits:
 *   node services/read-api/dist/seal-log/main.js
 * The report on stdout (JSON), the progress on stderr; run again after a failure, it takes up where it stopped.
 */
runMain(async () => {
  let shown = 0;
  // A step's line always; a copy's progress (a line a batch) once a second at most.
  const progress = (line: string) => {
    const batch = line.includes(' copied up to offset ');
    if (batch && Date.now() - shown < 1_000) return;
    if (batch) shown = Date.now();
    process.stderr.write(`seal-log: ${line}\n`);
  };
  const result = await runConfiguredTask({ name: 'seal-log', needs: ['kafka', 'mongo'], env: process.env }, ({ config, log }) =>
    sealDistributedLog(config, log, { progress }),
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
});
