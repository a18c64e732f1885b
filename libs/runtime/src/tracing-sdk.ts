import { context, diag, DiagLogLevel, propagation, type DiagLogger } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Logger } from '@rsd/platform';
import type { PROTOCOLS, Tracing, TracingConfig, TracingOptions } from './tracing';

/**
 * The SDK for the services of one process, loaded only when tracing is on. Each service is its own resource, so the embedded runtime's
 * four services appear under their own names as they do on the distributed runtime; they share one
 * batch processor and one exporter. OTEL_SERVICE_NAME names a service alone in its process; in a process
 * of several it cannot name each, so each keeps its own (a warning says so).
 */
export function startSdk(config: TracingConfig, endpoint: string, options: TracingOptions): Tracing {
  const { services, log } = options;
  diag.setLogger(diagLoggerOf(log), DiagLogLevel.WARN);
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());

  const processor = options.spanProcessor ?? new BatchSpanProcessor({ exporter: exporterOf(config, endpoint) });
  const sampler = samplerOf(config);
  const alone = services.length === 1;
  if (!alone && config.OTEL_SERVICE_NAME !== undefined) {
    log.warn(
      { OTEL_SERVICE_NAME: config.OTEL_SERVICE_NAME },
      'OTEL_SERVICE_NAME names one service; the services of this process keep their own names',
    );
  }
  const providers = new Map(
    services.map((service) => {
      const named = alone ? (config.OTEL_SERVICE_NAME ?? config.OTEL_RESOURCE_ATTRIBUTES[ATTR_SERVICE_NAME] ?? service) : service;
      const resource = defaultResource().merge(resourceFromAttributes({ ...config.OTEL_RESOURCE_ATTRIBUTES, [ATTR_SERVICE_NAME]: named }));
      return [service, new TracerProvider({ resource, sampler, spanProcessors: [processor] })] as const;
    }),
  );
  log.info({ endpoint, protocol: protocolOf(config), sampler: config.OTEL_TRACES_SAMPLER }, 'tracing: exporting spans by OTLP');

  return {
    enabled: true,
    tracerOf: (service) => providers.get(service)?.getTracer('@rsd/runtime'),
    shutdown: async () => {
      try {
        // The providers share the processor: its shutdown, once, exports what is left.
        await processor.shutdown();
      } finally {
        context.disable();
        propagation.disable();
        diag.disable();
      }
    },
  };
}

function protocolOf(config: TracingConfig): (typeof PROTOCOLS)[number] {
  return config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
}

/** Headers, timeout and compression the exporter reads from the environment itself (OTEL_EXPORTER_OTLP_HEADERS, …). */
function exporterOf(config: TracingConfig, url: string): SpanExporter {
  return protocolOf(config) === 'http/json' ? new OtlpJsonExporter({ url }) : new OtlpProtobufExporter({ url });
}

function samplerOf(config: TracingConfig): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.OTEL_TRACES_SAMPLER_ARG);
  switch (config.OTEL_TRACES_SAMPLER) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
  }
}

/** The SDK's own complaints (an export that failed, a dropped span) in the process's log. */
function diagLoggerOf(log: Logger): DiagLogger {
  const component = log.child({ component: 'opentelemetry' });
  const write =
    (level: 'error' | 'warn' | 'info' | 'debug' | 'trace') =>
    (message: string, ...args: unknown[]) =>
      component[level]({ details: args.map(String) }, message);
  return { error: write('error'), warn: write('warn'), info: write('info'), debug: write('debug'), verbose: write('trace') };
}
