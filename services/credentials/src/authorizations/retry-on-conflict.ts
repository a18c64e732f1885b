import { serviceUnavailable, type Logger } from '@rsd/platform';

/** Enough for a change racing the expiry scheduler or another change; more means something is wrong. */
const MAX_ATTEMPTS = 5;

/** What `attempt` returns when someone else changed the record between its read and its write. */
export const LOST_TO_A_CONCURRENT_CHANGE = Symbol('lost to a concurrent change');

/**
 * Optimistic concurrency for a change to one authorization: `attempt` reads the record, decides and
 * writes it at the revision it read; when the write loses, it reads and decides again, at most
 * MAX_ATTEMPTS times, then answers 503 (try again) having changed nothing.
 */
export async function retryOnConflict<T>(
  attempt: () => Promise<T | typeof LOST_TO_A_CONCURRENT_CHANGE>,
  failure: { log: Logger; what: string; context: object },
): Promise<T> {
  for (let tries = 1; tries <= MAX_ATTEMPTS; tries += 1) {
    const outcome = await attempt();
    if (outcome !== LOST_TO_A_CONCURRENT_CHANGE) return outcome;
  }
  failure.log.warn({ ...failure.context, attempts: MAX_ATTEMPTS }, `${failure.what} kept losing to concurrent changes`);
  throw serviceUnavailable('The authorization is being changed concurrently; try again');
}
