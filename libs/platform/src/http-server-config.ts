import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { env } from './config';

/** The soft limit on open files (`ulimit -n`) where the system tells it (Linux); undefined elsewhere or when unlimited. */
export function openFileLimit(): number | undefined {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

const MAX_CONNECTIONS_CEILING = 10_000;
const ASSUMED_FILE_LIMIT = 1024;

/**
 * Half the descriptors for connections, the rest for everything else a process opens (log files,
 * the event log, Kafka, MongoDB and Redis sockets); never more than 10,000 per process.
 */
export function defaultMaxConnections(fileLimit: number | undefined): number {
  return Math.min(MAX_CONNECTIONS_CEILING, Math.floor((fileLimit ?? ASSUMED_FILE_LIMIT) / 2));
}

/**
 * Limits of every HTTP server of a process (docs/decisions/0106-http-server-limits.md). A client that
 * does not finish its headers in time is answered 408 and closed, so nobody can hold descriptors with
 * slow or silent connections; the connection cap keeps the process below its descriptor limit.
 */
export const httpServerConfigSchema = z
  .object({
    HTTP_HEADERS_TIMEOUT_MS: env.positiveInt(10_000),
    HTTP_REQUEST_TIMEOUT_MS: env.positiveInt(30_000),
    // Above the idle timeout of the load balancers in front (AWS ALB: 60 s), so they, not we, close an idle connection.
    HTTP_KEEP_ALIVE_TIMEOUT_MS: env.positiveInt(65_000),
    HTTP_MAX_HEADER_SIZE: z.coerce.number().int().min(1024).max(1_048_576).default(16_384),
    HTTP_MAX_CONNECTIONS: z.coerce
      .number()
      .int()
      .positive()
      .default(() => defaultMaxConnections(openFileLimit())),
  })
  .superRefine((value, ctx) => {
    if (value.HTTP_HEADERS_TIMEOUT_MS > value.HTTP_REQUEST_TIMEOUT_MS) {
      ctx.addIssue({ code: 'custom', path: ['HTTP_HEADERS_TIMEOUT_MS'], message: 'must not exceed HTTP_REQUEST_TIMEOUT_MS' });
    }
    const fileLimit = openFileLimit();
    if (fileLimit !== undefined && value.HTTP_MAX_CONNECTIONS >= fileLimit) {
      ctx.addIssue({
        code: 'custom',
        path: ['HTTP_MAX_CONNECTIONS'],
        message: `must be below the open-file limit of this process (${fileLimit}), with room for its other descriptors`,
      });
    }
  });
export type HttpServerConfig = z.infer<typeof httpServerConfigSchema>;

/** What `listen` applies to one server. */
export interface HttpServerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxHeaderSize: number;
  maxConnections: number;
}

/**
 * The limits for one server of the process; `connectionShare` is its part of the process's connection
 * cap when several servers share the process (the embedded runtime), so together they stay below it.
 */
export function httpServerLimits(config: HttpServerConfig, connectionShare = 1): HttpServerLimits {
  return {
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    maxHeaderSize: config.HTTP_MAX_HEADER_SIZE,
    maxConnections: Math.max(1, Math.floor(config.HTTP_MAX_CONNECTIONS * connectionShare)),
  };
}
