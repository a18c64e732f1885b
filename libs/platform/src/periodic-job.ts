import type { Logger } from 'pino';

export interface PeriodicJob {
  /** No further runs; resolves once a run under way has finished. */
  stop(): Promise<void>;
}

/** Background work its owner starts on an interval and stops at shutdown (the expiry check, the outbox relay). */
export interface ScheduledWork {
  /** Starts running on the interval; a second call does nothing. */
  start(intervalMs: number): void;
  /** No further runs; resolves once a run under way has finished. */
  stop(): Promise<void>;
}

export interface PeriodicJobOptions {
  /** Says what failed in the log line of a failed run. */
  name: string;
  log: Pick<Logger, 'warn'>;
  /** Run once at once, before the first interval has passed (default: false). */
  runAtStart?: boolean;
}

/**
 * Background work on a timer, one shape for all of it (samplers, sweeps, pruning, expiry): never two
 * runs at once (a tick while one runs is skipped, so a slow store is not piled on), a failure logged
 * and the next tick tried anyway, and a timer that does not keep the process alive.
 */
export function every(intervalMs: number, job: () => unknown, options: PeriodicJobOptions): PeriodicJob {
  let running: Promise<void> | undefined;
  const tick = () => {
    if (running) return;
    // Cleared in a later turn, after the assignment: a job that fails at once must not leave it set.
    running = Promise.resolve()
      .then(job)
      .then(
        () => undefined,
        (error: unknown) => options.log.warn({ err: error }, `${options.name} failed; trying again in ${intervalMs} ms`),
      )
      .finally(() => {
        running = undefined;
      });
  };
  if (options.runAtStart) tick();
  const timer = setInterval(tick, intervalMs).unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * A scheduler's pass over what has fallen due (the expiry check, access reviews' due times): `due`
 * reads a page of it, `handle` changes one item and says whether it did. Pages are read until one is
 * short or changes nothing: a full page where nothing could be changed would come back unchanged, so
 * the pass stops rather than spin. Resolves to how many items changed.
 */
export async function drainDue<T>(
  pageSize: number,
  due: (limit: number) => Promise<readonly T[]>,
  handle: (item: T) => Promise<boolean>,
): Promise<number> {
  let changed = 0;
  for (;;) {
    const page = await due(pageSize);
    let changedNow = 0;
    for (const item of page) {
      if (await handle(item)) changedNow += 1;
    }
    changed += changedNow;
    if (page.length < pageSize || changedNow === 0) return changed;
  }
}

/**
 * Scheduled passes run on an interval from start, and (decision 52, where replicas share the store)
 * only on the replica that holds the lease: two would each make and announce the same change.
 */
export function leaderPasses(
  pass: () => Promise<unknown>,
  options: Omit<PeriodicJobOptions, 'runAtStart'> & { isLeader?: (() => boolean) | undefined },
): ScheduledWork {
  let job: PeriodicJob | undefined;
  return {
    start(intervalMs) {
      job ??= every(intervalMs, () => ((options.isLeader?.() ?? true) ? pass() : 0), { ...options, runAtStart: true });
    },
    async stop() {
      await job?.stop();
      job = undefined;
    },
  };
}

/**
 * A retention: at start and every `intervalMs` (an hour unless told), what is older than
 * `retentionDays` goes, by the store's `prune` (entries before the first instant kept).
 */
export function startRetention(options: {
  name: string;
  log: Pick<Logger, 'warn'>;
  clock: { now(): Date };
  retentionDays: number;
  prune: (before: Date, now: Date) => Promise<unknown>;
  intervalMs?: number;
}): PeriodicJob {
  const { clock, retentionDays, prune } = options;
  return every(
    options.intervalMs ?? 3_600_000,
    () => {
      const now = clock.now();
      return prune(new Date(now.getTime() - retentionDays * 86_400_000), now);
    },
    { name: options.name, log: options.log, runAtStart: true },
  );
}
