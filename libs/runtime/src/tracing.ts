import type * as TracingSdk from './tracing-sdk';
import { tracesEndpointOf, type Tracing, type TracingConfig, type TracingOptions } from './tracing-config';

export * from './tracing-config';

// Decision 39: tracing is on only when an OTLP endpoint is set (and the SDK not disabled); otherwise no
// module of the SDK is even loaded, no request is wrapped, no log line looks for a span: the process
// runs as if without tracing.

const OFF: Tracing = { enabled: false, tracerOf: () => undefined, shutdown: () => Promise.resolve() };

/**
 * Tracing for the services of one process: off, with no SDK loaded, when no endpoint is set; else the
 * SDK, loaded now (tracing-sdk.ts), so a process that does not trace never pays for its modules.
 */
export function startTracing(config: TracingConfig, options: TracingOptions): Tracing {
  const endpoint = tracesEndpointOf(config);
  if (endpoint === undefined) return OFF;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when tracing is on (decision 39: no cost when off)
  const sdk = require('./tracing-sdk') as typeof TracingSdk;
  return sdk.startSdk(config, endpoint, options);
}
