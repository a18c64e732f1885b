import { ApiError } from './errors';

/** Seconds a client waits before trying a 503 again, unless its maker knows better (a stale replica's own bound). */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/**
 * The one way a 503 is made: SERVICE_UNAVAILABLE carrying the `Retry-After` every 503 of every
 * service sends, which the error middleware writes as it writes any error's headers. Without a
 * message, it is the answer to an unreachable dependency (the ports' UnavailableError).
 */
export function serviceUnavailable(
  message = 'A service this request needs is unreachable; retry shortly',
  options: { cause?: unknown; retryAfterS?: number } = {},
): ApiError {
  const error = new ApiError('SERVICE_UNAVAILABLE', message, undefined, {
    'Retry-After': String(options.retryAfterS ?? UNAVAILABLE_RETRY_AFTER_S),
  });
  if (options.cause !== undefined) error.cause = options.cause;
  return error;
}
