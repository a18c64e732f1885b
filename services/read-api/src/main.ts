import { createServiceMetrics, type ReadinessCheck } from '@rsd/observability';
import { closeServer, createLogger, listen, loadConfigs, onShutdown, runMain } from '@rsd/platform';
import { systemClock } from '@rsd/ports';
import { openRuntime, runtimeConfigSchema } from '@rsd/runtime';
import { buildApp } from './app';
import { readApiConfigSchema } from './config';
import { DEFAULT_PROJECTION_GROUP_ID, startProjections } from './projections/projection-runner';
import { createCachedReadViews } from './views/cached-read-views';
import { startChangeFeed } from './views/view-change-feed';

/** One read-API replica: projects the topics into the shared views and serves them. */
async function main(): Promise<void> {
  const [service, runtimeSettings] = loadConfigs(
    [readApiConfigSchema, runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'mongo', 'redis'] })],
    process.env,
  );
  const config = { ...service, ...runtimeSettings };
  const log = createLogger('read-api', config.LOG_LEVEL);
  const metrics = createServiceMetrics('read-api');
  const runtime = await openRuntime(config, 'read-api', log);

  const views = await runtime.openReadViews();
  // The group's committed position belongs to the views it wrote: a new views database starts from offset zero.
  const groupId = `${DEFAULT_PROJECTION_GROUP_ID}.${config.READ_VIEWS_DB}`;
  const projections = await startProjections({
    eventLog: runtime.eventLog,
    views,
    log,
    groupId,
    onDeadLetter: (topic) => metrics.deadLettered.inc({ topic }),
    onProjectionError: () => metrics.projectionErrors.inc(),
  });
  let caughtUp = false;
  void projections.caughtUp.then(() => (caughtUp = true));

  // In front of the shared store: a cache, corrected by this replica's own change feed (see cached-read-views.ts).
  const served = createCachedReadViews(views, { ttlMs: config.VIEW_CACHE_TTL_MS, overlayRetentionMs: 10 * 60_000, maxEntries: 100_000 });
  const feed = await startChangeFeed({ eventLog: runtime.eventLog, views: served, log });
  const sweeper = setInterval(() => served.sweep(), 30_000).unref();
  const lagSampler = setInterval(() => {
    void runtime.consumerLag(groupId).then(
      (lag) => lag !== undefined && metrics.consumerLag.set({ group: groupId }, lag),
      () => undefined,
    );
  }, 5_000).unref();

  const projectionCaughtUp: ReadinessCheck = {
    name: 'projection',
    check: () => (caughtUp ? Promise.resolve() : Promise.reject(new Error('the projection is still catching up'))),
  };
  const rateLimitStores = runtime.rateLimitStores((active) => metrics.rateLimitFallback.set(active ? 1 : 0));
  const app = buildApp({
    config,
    views: served,
    rateLimitStores,
    clock: systemClock,
    log,
    operations: { metrics, readiness: [...runtime.readiness(), projectionCaughtUp] },
  });
  const server = await listen(app, config.READ_API_PORT, config.READ_API_HOST);
  log.info({ port: config.READ_API_PORT, runtime: runtime.kind }, 'read API listening');

  onShutdown(
    log,
    [
      () => closeServer(server),
      async () => {
        clearInterval(sweeper);
        clearInterval(lagSampler);
        await feed.close();
        await projections.close();
      },
      () => runtime.close(),
    ],
    config.SHUTDOWN_DEADLINE_MS,
  );
}

runMain(main);
