import type { Tracer } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { z } from 'zod';
import type { Logger } from '@rsd/platform';

// Decision 39: tracing is configured by the standard OpenTelemetry variables and nothing else. This
// module is that configuration and the shapes both tracing.ts (off, or the SDK loaded on demand) and
// tracing-sdk.ts (the SDK) share, so that neither needs the other's types.

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export const PROTOCOLS = ['http/protobuf', 'http/json'] as const;

const optional = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));
const url = optional.pipe(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional());
const protocol = optional.pipe(
  z
    .enum(PROTOCOLS, { error: `must be ${PROTOCOLS.join(' or ')} (gRPC is not built in: use the receiver's OTLP/HTTP port, 4318)` })
    .optional(),
);

export const tracingConfigSchema = z.object({
  // The specification's boolean: only "true", in any case, is true.
  OTEL_SDK_DISABLED: optional.transform((value) => value?.toLowerCase() === 'true'),
  OTEL_TRACES_EXPORTER: optional.pipe(z.enum(['otlp', 'none'], { error: 'must be otlp or none' }).default('otlp')),
  OTEL_EXPORTER_OTLP_ENDPOINT: url,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
  OTEL_SERVICE_NAME: optional,
  OTEL_RESOURCE_ATTRIBUTES: optional.transform((value, ctx) => {
    const attributes = resourceAttributesOf(value ?? '');
    if (attributes === undefined)
      ctx.addIssue({ code: 'custom', message: 'must be key=value pairs separated by commas, values percent-encoded' });
    return attributes ?? {};
  }),
  OTEL_TRACES_SAMPLER: optional.pipe(z.enum(SAMPLERS, { error: `must be one of ${SAMPLERS.join(', ')}` }).default('parentbased_always_on')),
  OTEL_TRACES_SAMPLER_ARG: optional.pipe(z.coerce.number<string | undefined>().min(0).max(1).default(1)),
});

export type TracingConfig = z.infer<typeof tracingConfigSchema>;

/** The traces endpoint, or undefined when tracing is off. */
export function tracesEndpointOf(config: TracingConfig): string | undefined {
  if (config.OTEL_SDK_DISABLED || config.OTEL_TRACES_EXPORTER === 'none') return undefined;
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  // The specification: the signal's path is appended to the base endpoint.
  return base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`;
}

/** The process's tracing: one tracer per service, or none at all. */
export interface Tracing {
  readonly enabled: boolean;
  /** The tracer of a service's spans; undefined when tracing is off. */
  tracerOf(service: string): Tracer | undefined;
  /** Exports what is still buffered and stops; the process's last closer. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** The services of this process; each is a resource of its own (`service.name`). */
  services: readonly string[];
  /** The process's name (`embedded`, or its one service's): the resource of the clients' spans when it runs several. */
  process?: string;
  /**
   * Load OpenTelemetry's instrumentations of the Kafka, MongoDB and Redis clients (the distributed runtime),
   * before those clients are loaded: their spans are the process's calls to those servers.
   */
  instrumentClients?: boolean;
  log: Logger;
  /** Tests: where spans go instead of the batch processor and its OTLP exporter. */
  spanProcessor?: SpanProcessor;
}

/** `key=value,key2=value2`, values percent-encoded (the specification's format); undefined when malformed. */
export function resourceAttributesOf(text: string): Record<string, string> | undefined {
  const attributes: Record<string, string> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const equals = pair.indexOf('=');
    const key = pair.slice(0, equals).trim();
    if (equals === -1 || key === '') return undefined;
    try {
      attributes[key] = decodeURIComponent(pair.slice(equals + 1).trim());
    } catch {
      return undefined;
    }
  }
  return attributes;
}
