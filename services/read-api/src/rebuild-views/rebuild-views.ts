import { randomUUID } from 'node:crypto';
import { READ_VIEWS } from '@rsd/domain';
import type { Logger } from '@rsd/platform';
import type { Runtime } from '@rsd/ports';
import { startProjections } from '../projections/projection-runner';

/**
 * Replays the event log from offset zero into the read views the runtime gives, in a consumer group
 * used once, and resolves once they hold everything the log held. Where they live: the runtime's
 * views of a new name, so the live views are never touched and the rebuild can run while the API serves.
 */
export async function rebuildViews(runtime: Runtime, log: Logger): Promise<{ rebuiltInto: string; seconds: number }> {
  const started = Date.now();
  const views = await runtime.openViews('read-views', READ_VIEWS);
  const projection = await startProjections({
    eventLog: runtime.eventLog,
    views: views.store,
    log,
    groupId: `read-api-rebuild-${randomUUID()}`,
    deadLetters: false,
    ephemeral: true,
  });
  await projection.caughtUp;
  await projection.close();
  return { rebuiltInto: views.place, seconds: (Date.now() - started) / 1000 };
}
