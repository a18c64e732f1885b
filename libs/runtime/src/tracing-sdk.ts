import { context, diag, DiagLogLevel, propagation, type DiagLogger } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Logger } from '@rsd/platform';
import type { PROTOCOLS, Tracing, TracingConfig, TracingOptions } from './tracing-config';

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

  const exporting = options.spanProcessor ?? new BatchSpanProcessor({ exporter: exporterOf(config, endpoint) });
  const processor = options.instrumentClients ? withheldAttributes(exporting) : exporting;
  const sampler = samplerOf(config);
  const alone = services.length === 1;
  if (!alone && config.OTEL_SERVICE_NAME !== undefined) {
    log.warn(
      { OTEL_SERVICE_NAME: config.OTEL_SERVICE_NAME },
      'OTEL_SERVICE_NAME names one service; the services of this process keep their own names',
    );
  }
  const providerOf = (service: string) => {
    const named = alone ? (config.OTEL_SERVICE_NAME ?? config.OTEL_RESOURCE_ATTRIBUTES[ATTR_SERVICE_NAME] ?? service) : service;
    const resource = defaultResource().merge(resourceFromAttributes({ ...config.OTEL_RESOURCE_ATTRIBUTES, [ATTR_SERVICE_NAME]: named }));
    return new TracerProvider({ resource, sampler, spanProcessors: [processor] });
  };
  const providers = new Map(services.map((service) => [service, providerOf(service)] as const));
  // The clients are the process's, shared by its services: alone, its service's; with several, the process's own name.
  const instrumentations = options.instrumentClients
    ? clientInstrumentations((alone ? providers.get(services[0] ?? '') : undefined) ?? providerOf(options.process ?? 'rsd'))
    : [];
  log.info(
    {
      endpoint,
      protocol: protocolOf(config),
      sampler: config.OTEL_TRACES_SAMPLER,
      ...(instrumentations.length > 0
        ? { instrumentations: instrumentations.map((instrumentation) => instrumentation.instrumentationName) }
        : {}),
    },
    'tracing: exporting spans by OTLP',
  );

  return {
    enabled: true,
    tracerOf: (service) => providers.get(service)?.getTracer('@rsd/runtime'),
    shutdown: async () => {
      try {
        for (const instrumentation of instrumentations) instrumentation.disable();
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

/**
 * OpenTelemetry's instrumentations of the distributed runtime's clients, enabled before the runtime
 * loads those clients (they patch a module as it is required). What they may record is narrowed to
 * what decision 39 allows: a MongoDB span has no statement (WITHHELD), its operation and collection
 * say what it did; a Redis span's statement is the command's name, not its arguments (a limiter's keys
 * name the credential). Both record only within a trace already begun (`requireParentSpan`): a
 * background poll starts none.
 */
function clientInstrumentations(provider: TracerProvider): Instrumentation[] {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on and the runtime is distributed */
  const { KafkaJsInstrumentation } =
    require('@opentelemetry/instrumentation-kafkajs') as typeof import('@opentelemetry/instrumentation-kafkajs');
  const { MongoDBInstrumentation } =
    require('@opentelemetry/instrumentation-mongodb') as typeof import('@opentelemetry/instrumentation-mongodb');
  const { IORedisInstrumentation } =
    require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const instrumentations: Instrumentation[] = [
    new KafkaJsInstrumentation({ enabled: false }),
    // The statement is withheld (WITHHELD): nothing to serialize.
    new MongoDBInstrumentation({ enabled: false, requireParentSpan: true, dbStatementSerializer: () => '' }),
    new IORedisInstrumentation({ enabled: false, requireParentSpan: true, dbStatementSerializer: (command) => command }),
  ];
  for (const instrumentation of instrumentations) {
    instrumentation.setTracerProvider(provider);
    instrumentation.enable();
  }
  return instrumentations;
}

/**
 * What no span keeps, whatever recorded it, where an instrumentation has no option to leave it out: the
 * kafkajs instrumentation records each message's key, which is a Client ID or an organization id (the
 * records' keys); the MongoDB one a statement, which even with values masked names the fields filtered
 * on (its serializer sees the filter alone for some commands, so cannot be made to give the command).
 * Taken out as the span starts, before any processor or exporter sees it.
 */
const WITHHELD: Record<string, readonly string[]> = {
  '@opentelemetry/instrumentation-kafkajs': ['messaging.kafka.message.key'],
  '@opentelemetry/instrumentation-mongodb': ['db.query.text'],
};

function withheldAttributes(next: SpanProcessor): SpanProcessor {
  return {
    onStart: (span, parentContext) => {
      // The SDK's span keeps its attributes in a plain object, which the processors receive as it starts.
      const attributes = span.attributes as Record<string, unknown>;
      for (const key of WITHHELD[span.instrumentationScope.name] ?? []) delete attributes[key];
      next.onStart(span, parentContext);
    },
    onEnd: (span) => next.onEnd(span),
    forceFlush: () => next.forceFlush(),
    shutdown: () => next.shutdown(),
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
