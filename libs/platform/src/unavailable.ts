/**
 * A store, log or server a request needs could not be reached, or could not take the request now.
 * Every adapter turns its driver's can't-reach errors into this (Kafka, MongoDB, Redis), so the HTTP
 * layer answers the documented 503 SERVICE_UNAVAILABLE with Retry-After rather than a 500, the log
 * calls it the outage it is, and a failed start says which server it waits for. Anything else a
 * driver throws stays what it is: a defect, answered 500.
 */
export class UnavailableError extends Error {
  /** kafka, mongo, redis, or what else was out of reach. */
  readonly dependency: string;

  constructor(dependency: string, options?: { cause?: unknown; detail?: string }) {
    super(options?.detail ?? `${dependency} is unreachable`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UnavailableError';
    this.dependency = dependency;
  }
}
