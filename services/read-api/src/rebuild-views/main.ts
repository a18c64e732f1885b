import { parseArgs } from 'node:util';
import { runMain } from '@rsd/platform';
import { runTask } from '@rsd/runtime';
import { rebuildViews } from './rebuild-views';

/**
 * Rebuilds every read view from offset zero into a new database, then exits:
 *   node services/read-api/dist/rebuild-views/main.js [--into <database>]
 * Point READ_VIEWS_DB at the result (a rolling restart) to serve from it.
 */
runMain(async () => {
  const { values } = parseArgs({ options: { into: { type: 'string' } } });
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const result = await runTask(
    {
      name: 'read-api-rebuild',
      needs: ['kafka', 'mongo'],
      env: process.env,
      settings: ({ READ_VIEWS_DB }) => ({ READ_VIEWS_DB: values.into ?? `${READ_VIEWS_DB}_rebuild_${stamp}` }),
    },
    ({ runtime, log }) => rebuildViews(runtime, log),
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
});
