import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Every metric a service exposes at /metrics, in one registry per service (no global registry). */
export interface ServiceMetrics {
  registry: Registry;
  /** The text of /metrics: the service's own metrics, then the process's (processMetrics). */
  exposition(): Promise<string>;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  rateLimitRejections: Counter<'limiter'>;
  rateLimitFallback: Gauge;
  consumerLag: Gauge<'group'>;
  feedStaleness: Gauge;
  projectionErrors: Counter;
  deadLettered: Counter<'topic'>;
  accessLogPublished: Counter;
  accessLogPublishFailures: Counter;
  accessLogDropped: Counter<'reason'>;
  accessLogBuffered: Gauge;
  /** Decision 52: the leases this replica holds, by the work they are for (`notifier-queue`, `credentials-relay`). */
  leasesHeld: Gauge<'work'>;
  /** Decision 52: outbox entries published again by a relay that took over from a lost one (at most this many repeats). */
  outboxTakeoverRepublished: Counter;
}

let processRegistry: Registry | undefined;
/** A stall still shows in the delay histogram when a sample falls in it: over minutes, in proportion to its length. */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * CPU, memory, handles, GC and event-loop delay: facts about the process, collected once per process
 * whatever the services in it, and not labelled with a service (the scrape target says which process
 * it is). The loop's delay is sampled once per process and every EVENT_LOOP_SAMPLE_MS rather than
 * prom-client's 10 ms: each sample wakes the event loop, which an idle process pays for in CPU
 * (docs/decisions/0101-embedded-runtime-on-sqlite.md).
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }
  return processRegistry;
}

export function createServiceMetrics(service: string): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  const shared = processMetrics();
  const registers = [registry];
  return {
    registry,
    exposition: async () => `${await registry.metrics()}${await shared.metrics()}`,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route template and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    rateLimitRejections: new Counter({
      name: 'rate_limit_rejections_total',
      help: 'Requests answered 429, by limiter',
      labelNames: ['limiter'],
      registers,
    }),
    rateLimitFallback: new Gauge({
      name: 'rate_limit_store_fallback',
      help: '1 while the shared rate-limit store is unreachable and this replica limits on its own',
      registers,
    }),
    consumerLag: new Gauge({
      name: 'event_consumer_lag',
      help: 'Records not yet handled by the consumer group, summed over partitions',
      labelNames: ['group'],
      registers,
    }),
    feedStaleness: new Gauge({
      name: 'event_feed_staleness_seconds',
      help: 'Seconds since this replica last knew its change feed had everything the event log held (0: views in this process)',
      registers,
    }),
    projectionErrors: new Counter({
      name: 'projection_errors_total',
      help: 'Projection attempts that failed and will be retried',
      registers,
    }),
    deadLettered: new Counter({
      name: 'events_dead_lettered_total',
      help: 'Records sent to the dead-letter topic, by source topic',
      labelNames: ['topic'],
      registers,
    }),
    accessLogPublished: new Counter({
      name: 'access_log_published_total',
      help: 'Access records the access-log stream took (decision 21)',
      registers,
    }),
    accessLogPublishFailures: new Counter({
      name: 'access_log_publish_failures_total',
      help: 'Batches of access records the stream could not take; they stay buffered and are tried again',
      registers,
    }),
    accessLogDropped: new Counter({
      name: 'access_log_dropped_total',
      help: 'Access records never published: the buffer was full (buffer_full) or the process stopped first (shutdown)',
      labelNames: ['reason'],
      registers,
    }),
    accessLogBuffered: new Gauge({
      name: 'access_log_buffered',
      help: 'Access records waiting in this replica for the stream',
      registers,
    }),
    leasesHeld: new Gauge({
      name: 'rsd_leases_held',
      help: 'Leases this replica holds, by the work they are for (decision 52)',
      labelNames: ['work'],
      registers,
    }),
    outboxTakeoverRepublished: new Counter({
      name: 'rsd_outbox_takeover_republished_total',
      help: 'Outbox entries published by a relay that took over from a lost one: each may have been published before (decision 52)',
      registers,
    }),
  };
}
