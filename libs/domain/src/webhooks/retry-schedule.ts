/**
 * Decision 27's retries: exponential backoff with full jitter for up to 24 h after the first attempt,
 * then give up (the subscription becomes disabled). The wait after attempt n is drawn uniformly
 * between `minWaitMs` and its ceiling, min(maxWaitMs, baseMs × factor^(n−1)): 5 s, 15 s, 45 s,
 * 2 min 15 s, 6 min 45 s, 20 min 15 s, 1 h 0 min 45 s, then 2 h for every later one. Full jitter spreads the retries
 * of many subscriptions that failed together (one receiver down for all of them) instead of sending
 * them back in waves; the floor keeps a retry from following its failure at once.
 */
export const RETRY_SCHEDULE = {
  /** The ceiling of the first wait: a receiver that failed once is tried again within 5 s. */
  baseMs: 5_000,
  factor: 3,
  /** No single wait is longer: a receiver that comes back gets its delivery within 2 h (1 h on average). */
  maxWaitMs: 2 * 60 * 60 * 1000,
  /** No wait is shorter. */
  minWaitMs: 1_000,
  /** Measured from the first attempt; the last retry is due no later than this. */
  windowMs: 24 * 60 * 60 * 1000,
} as const;

export type RetryDecision = { outcome: 'retry'; attempt: number; at: Date } | { outcome: 'give-up' };

export interface FailedAttempt {
  /** When attempt 1 was made (its start): the 24 h count from here. */
  firstAttemptAt: Date;
  /** The number of the attempt that failed: 1 for the first. */
  attempt: number;
  /** When it failed (its answer, or its timeout). */
  failedAt: Date;
}

/** The ceiling of the wait after `attempt` failed: never decreasing, never above `maxWaitMs`. */
export function retryCeilingMs(attempt: number): number {
  assertAttempt(attempt);
  const { baseMs, factor, maxWaitMs } = RETRY_SCHEDULE;
  // factor^(n−1) becomes Infinity for a very large n; the cap still applies.
  return Math.min(maxWaitMs, baseMs * factor ** (attempt - 1));
}

/**
 * The next attempt after a failure, or give up. `random` returns a number in [0, 1] (Math.random in
 * the service, a fixed one in tests). A wait that would end after the window is cut to end with it,
 * so the receiver gets one last try at 24 h; once not even the shortest wait fits, the answer is to
 * give up.
 */
export function nextRetry(failed: FailedAttempt, random: () => number): RetryDecision {
  assertAttempt(failed.attempt);
  const { minWaitMs, windowMs } = RETRY_SCHEDULE;
  const deadline = failed.firstAttemptAt.getTime() + windowMs;
  const failedAt = failed.failedAt.getTime();
  if (failedAt + minWaitMs > deadline) return { outcome: 'give-up' };
  const draw = random();
  if (!(draw >= 0 && draw <= 1)) throw new RangeError(`random() must return a number in [0, 1], got ${draw}`);
  const wait = minWaitMs + draw * (retryCeilingMs(failed.attempt) - minWaitMs);
  return { outcome: 'retry', attempt: failed.attempt + 1, at: new Date(Math.min(failedAt + Math.round(wait), deadline)) };
}

function assertAttempt(attempt: number): void {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a whole number from 1, got ${attempt}`);
}
