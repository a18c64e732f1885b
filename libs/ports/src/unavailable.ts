/**
 * A store, log or server a request needs could not be reached. Adapters turn their drivers'
 * can't-reach errors into this, so the HTTP layer answers the documented 503 SERVICE_UNAVAILABLE
 * (retry later) rather than a 500, and logs it as the outage it is.
 */
export class UnavailableError extends Error {
  constructor(dependency: string, options?: { cause?: unknown }) {
    super(`${dependency} is unreachable`, options);
    this.name = 'UnavailableError';
  }
}
