import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Every metric a service exposes at /metrics, in one registry per service (no global registry). */
export interface ServiceMetrics {
  registry: Registry;
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
}

export function createServiceMetrics(service: string): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
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
  };
}
