import type { Logger } from 'pino';
import { ConfigError } from './config';

/** Capped exponential backoff: the n-th pause is `firstDelayMs · 2^(n-1)`, at most `maxDelayMs`, jittered. */
export interface Backoff {
  firstDelayMs: number;
  maxDelayMs: number;
}

/**
 * Short enough that a service is ready within seconds of its last dependency, long enough that a
 * fleet of replicas waiting for a cold cluster does not hammer it.
 */
export const START_BACKOFF: Backoff = { firstDelayMs: 250, maxDelayMs: 5_000 };

/**
 * The pause before attempt `attempt + 1`: "equal jitter", half the capped exponential delay plus a
 * random share of the other half, so replicas started together spread out but never retry at once.
 */
export function backoffDelay(attempt: number, backoff: Backoff, random: () => number = Math.random): number {
  const capped = Math.min(backoff.maxDelayMs, backoff.firstDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(capped / 2 + random() * (capped / 2));
}

/** What a failed attempt tells the starting server (its /readyz) and the log. */
export interface FailedAttempt {
  attempt: number;
  /** The dependency the attempt was waiting for, when known (kafka, mongo, redis). */
  dependency: string | undefined;
  /** The error's first line. */
  reason: string;
  retryInMs: number;
}

/** A start that did not succeed within START_DEADLINE_MS: its message is the one line the process prints. */
export class StartDeadlineError extends Error {
  constructor(deadlineMs: number, attempts: number, last: FailedAttempt | undefined) {
    const waiting = last ? `; still waiting for ${last.dependency ?? 'a dependency'}: ${last.reason}` : '';
    super(`gave up starting: START_DEADLINE_MS (${deadlineMs} ms) passed after ${attempts} attempt(s)${waiting}`);
    this.name = 'StartDeadlineError';
  }
}

/** What an attempt opened, closed in reverse order when the attempt fails and when the service stops. */
export interface StartScope {
  closeOnStop(close: () => Promise<void>): void;
}

export interface StartOptions {
  log: Logger;
  /** Give up this long after the first attempt began; undefined: keep trying (the orchestrator decides). */
  deadlineMs?: number | undefined;
  /** Told after every failed attempt (the starting server shows it on /readyz). */
  onFailedAttempt?: (failure: FailedAttempt) => void;
  /** Names the dependency an error came from, for the log and /readyz. */
  dependencyOf?: (error: unknown) => string | undefined;
  /** Errors no retry can fix, besides a ConfigError (always fatal): rethrown at once. */
  isFatal?: (error: unknown) => boolean;
  backoff?: Backoff;
  /** Injected by tests. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
}

export interface Starter<T> {
  /** The first successful attempt's result; rejects with a fatal error or a StartDeadlineError; never settles once stopped. */
  readonly started: Promise<T>;
  /** No further attempts; closes what the successful attempt (or the one under way) opened. */
  stop(): Promise<void>;
}

/**
 * Runs `attempt` until it succeeds: the service's dependencies may be unreachable, starting or
 * loading when it starts, and they come up in any order. Each failure is logged at warn (a
 * dependency that is not there yet is not an error), what the attempt opened is closed, and the
 * next attempt follows after a capped, jittered backoff. Only a configuration error, an error
 * `isFatal` accepts, or the deadline ends it.
 */
export function startWithRetries<T>(attempt: (scope: StartScope) => Promise<T>, options: StartOptions): Starter<T> {
  const { log, deadlineMs, backoff = START_BACKOFF, random = Math.random } = options;
  const sleep = options.sleep ?? abortableSleep;
  const stopping = new AbortController();
  let current: Scope | undefined;
  let attempts = 0;
  let last: FailedAttempt | undefined;
  let deadline: NodeJS.Timeout | undefined;

  const loop = async (): Promise<T> => {
    for (;;) {
      attempts += 1;
      const scope = new Scope(log);
      current = scope;
      try {
        const result = await attempt(scope);
        if (stopping.signal.aborted) return never();
        return result;
      } catch (error) {
        await scope.close();
        if (stopping.signal.aborted) return never();
        if (error instanceof ConfigError || options.isFatal?.(error)) throw error;
        last = {
          attempt: attempts,
          dependency: options.dependencyOf?.(error),
          reason: firstLine(error),
          retryInMs: backoffDelay(attempts, backoff, random),
        };
        log.warn(last, 'start-up attempt failed; retrying');
        options.onFailedAttempt?.(last);
      }
      await sleep(last.retryInMs, stopping.signal);
      if (stopping.signal.aborted) return never();
    }
  };

  const outOfTime =
    deadlineMs === undefined
      ? undefined
      : new Promise<never>((_resolve, reject) => {
          deadline = setTimeout(() => {
            stopping.abort();
            reject(new StartDeadlineError(deadlineMs, attempts, last));
          }, deadlineMs);
          deadline.unref();
        });
  const running = loop();
  const started = (outOfTime ? Promise.race([running, outOfTime]) : running).finally(() => clearTimeout(deadline));
  // Whichever loses the race must not surface as an unhandled rejection.
  running.catch(() => undefined);
  outOfTime?.catch(() => undefined);

  return {
    started,
    async stop() {
      stopping.abort();
      clearTimeout(deadline);
      await current?.close();
    },
  };
}

/**
 * After stop() `started` never settles: the process is shutting down, and a rejection would race
 * the shutdown's own exit with a failure of its own.
 */
function never(): Promise<never> {
  return new Promise<never>(() => undefined);
}

class Scope implements StartScope {
  private readonly closers: (() => Promise<void>)[] = [];
  private closed = false;

  constructor(private readonly log: Logger) {}

  closeOnStop(close: () => Promise<void>): void {
    // Opened by an attempt that was stopped meanwhile: nothing will ever use it.
    if (this.closed) void this.run(close);
    else this.closers.push(close);
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.closers.length > 0) await this.run(this.closers.pop()!);
  }

  private async run(close: () => Promise<void>): Promise<void> {
    try {
      await close();
    } catch (error) {
      this.log.warn({ reason: firstLine(error) }, 'could not close what a start-up attempt opened');
    }
  }
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.split('\n', 1)[0] ?? text;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
