import type { ServiceMetrics } from '@rsd/observability';
import type { Logger } from '@rsd/platform';
import type { Runtime } from '@rsd/ports';
import type { ReadApiConfig } from '../config';
import { createAccessRecorder, type AccessRecorder } from './access-recorder';

/** How long a stopping replica keeps publishing what it holds; the rest is counted as dropped. */
export const ACCESS_LOG_STOP_DEADLINE_MS = 2_000;

/** The recorder on the runtime's access-log stream, with its metrics; undefined when ACCESS_LOG_ENABLED=false. */
export async function startAccessRecording(
  config: ReadApiConfig,
  runtime: Pick<Runtime, 'openAccessLog'>,
  metrics: ServiceMetrics,
  log: Logger,
): Promise<AccessRecorder | undefined> {
  if (!config.ACCESS_LOG_ENABLED) {
    log.warn('ACCESS_LOG_ENABLED=false: reads are not recorded in the access log, and usage does not grow');
    return undefined;
  }
  const accessLog = await runtime.openAccessLog({ retentionDays: config.ACCESS_LOG_RETENTION_DAYS });
  return createAccessRecorder({
    publish: (records) => accessLog.publish(records),
    maxBuffered: config.ACCESS_LOG_BUFFER_MAX,
    batchSize: config.ACCESS_LOG_BATCH_SIZE,
    flushIntervalMs: config.ACCESS_LOG_FLUSH_INTERVAL_MS,
    log: log.child({ component: 'access-recorder' }),
    metrics: {
      published: (count) => metrics.accessLogPublished.inc(count),
      publishFailed: () => metrics.accessLogPublishFailures.inc(),
      dropped: (reason, count) => metrics.accessLogDropped.inc({ reason }, count),
      buffered: (count) => metrics.accessLogBuffered.set(count),
    },
  });
}
