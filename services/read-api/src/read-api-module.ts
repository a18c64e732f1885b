import { hostname } from 'node:os';
import { READ_VIEWS } from '@rsd/domain';
import { caughtUpCheck, createServiceMetrics } from '@rsd/observability';
import { every, stopInOrder, type Logger } from '@rsd/platform';
import type { Clock, RunningService, Runtime } from '@rsd/ports';
import { buildApp } from './app';
import type { ReadApiConfig } from './config';
import { DEFAULT_PROJECTION_GROUP_ID, startProjections } from './projections/projection-runner';
import type { ResponseSigner } from './signing/response-signer';
import { signingKeysFrom } from '@rsd/platform';
import { ACCESS_LOG_STOP_DEADLINE_MS, startAccessRecording } from './access-log/access-recording';

export interface ReadApiModuleDeps {
  config: ReadApiConfig;
  runtime: Runtime;
  clock: Clock;
  log: Logger;
  /** Default: the active key's. Only `npm run bench` gives another, to price decision 24's signing against no signing. */
  responseSigner?: ResponseSigner;
}

const LAG_SAMPLE_INTERVAL_MS = 5_000;
const STALENESS_SAMPLE_INTERVAL_MS = 1_000;

/**
 * The read API: projects the topics into the views and serves them through the runtime's reader of
 * those views (a cache kept current by a change feed of its own where other replicas write them too).
 */
export async function createReadApiModule({ config, runtime, clock, log, responseSigner }: ReadApiModuleDeps): Promise<RunningService> {
  const metrics = createServiceMetrics('read-api');
  const views = await runtime.openViews('read-views', READ_VIEWS);
  const groupId = views.groupId(DEFAULT_PROJECTION_GROUP_ID);
  const projections = await startProjections({
    eventLog: runtime.eventLog,
    views: views.store,
    log,
    groupId,
    onDeadLetter: (topic) => metrics.deadLettered.inc({ topic }),
    onProjectionError: () => metrics.projectionErrors.inc(),
  });

  const served = await views.reader({
    readerId: config.REPLICA_ID ?? `${hostname()}-${config.READ_API_PORT}`,
    clock,
    cacheTtlMs: config.VIEW_CACHE_TTL_MS,
    staleness: {
      boundMs: config.FEED_STALENESS_BOUND_MS,
      lagBoundMs: config.FEED_LAG_BOUND_MS,
      recoveryGraceMs: config.FEED_RECOVERY_GRACE_MS,
    },
  });
  const lagSampler = every(
    LAG_SAMPLE_INTERVAL_MS,
    async () => {
      const lag = await runtime.consumerLag(groupId);
      if (lag !== undefined) metrics.consumerLag.set({ group: groupId }, lag);
    },
    { name: 'sampling the projection lag', log },
  );
  const stalenessSampler = every(
    STALENESS_SAMPLE_INTERVAL_MS,
    () => metrics.feedStaleness.set(served.staleness.staleForMs(clock.now()) / 1000),
    { name: 'sampling the feed staleness', log },
  );

  const accessRecorder = await startAccessRecording(config, runtime, metrics, log);
  const app = buildApp({
    config,
    // The runner has resolved it (SIGNING_KEYS_SECRET): configured, or made in the data directory.
    signingKeys: await signingKeysFrom(config.RESPONSE_SIGNING_KEYS ?? []),
    ...(responseSigner ? { responseSigner } : {}),
    views: served.views,
    staleness: served.staleness,
    rateLimitStores: await runtime.rateLimitStores((active) => metrics.rateLimitFallback.set(active ? 1 : 0)),
    clock,
    log,
    operations: { metrics, readiness: [...runtime.readiness(), caughtUpCheck(projections.caughtUp), ...served.readiness] },
    recordAccess: accessRecorder?.record,
  });

  return {
    app,
    caughtUp: projections.caughtUp,
    stop: stopInOrder(
      lagSampler,
      stalenessSampler,
      // The server has stopped taking requests by now: every answer's record is in the recorder.
      () => accessRecorder?.stop(ACCESS_LOG_STOP_DEADLINE_MS),
      served,
      projections,
      views.store,
    ),
  };
}
