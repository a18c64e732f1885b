import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { READ_VIEWS } from '@rsd/domain';
import { createLogger, env, loadConfigs, runMain } from '@rsd/platform';
import { openRuntime, runtimeConfigSchema } from '@rsd/runtime';
import { startProjections } from './projections/projection-runner';

/**
 * Rebuilds every read view from offset zero into a new database, then exits:
 *   node services/read-api/dist/rebuild-views.js [--into <database>]
 * Point READ_VIEWS_DB at the result (a rolling restart) to serve from it. The live views are never
 * touched, so the rebuild can run while the API serves.
 */
async function rebuild(): Promise<void> {
  const [runtimeSettings, { LOG_LEVEL }] = loadConfigs(
    [runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'mongo'] }), z.object({ LOG_LEVEL: env.logLevel() })],
    process.env,
  );
  const { values } = parseArgs({ options: { into: { type: 'string' } } });
  const into = values.into ?? `${runtimeSettings.READ_VIEWS_DB}_rebuild_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}`;
  const log = createLogger('rebuild-views', LOG_LEVEL);
  const runtime = await openRuntime({ ...runtimeSettings, READ_VIEWS_DB: into }, 'read-api-rebuild', log);
  const started = Date.now();
  try {
    const views = await runtime.openViewStore(READ_VIEWS);
    const projection = await startProjections({
      eventLog: runtime.eventLog,
      views,
      log,
      groupId: `read-api-rebuild-${randomUUID()}`,
      deadLetters: false,
      ephemeral: true,
    });
    await projection.caughtUp;
    await projection.close();
  } finally {
    await runtime.close();
  }
  process.stdout.write(`${JSON.stringify({ rebuiltInto: into, seconds: (Date.now() - started) / 1000 })}\n`);
}

runMain(rebuild);
