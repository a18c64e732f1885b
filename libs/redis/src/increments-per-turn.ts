import type { Redis, Result } from 'ioredis';
import type { IncrementResponse } from '@rsd/ports';

/** The script's name on the client (ioredis `defineCommand`), also left out of auto-pipelining. */
export const INCREMENT_EACH_COMMAND = 'rsdIncrementEach';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** KEYS: the counters; ARGV[1]: the window in ms. Per key, its hits and the milliseconds left of its window. */
    rsdIncrementEach(numberOfKeys: number, ...keysThenWindowMs: (string | number)[]): Result<unknown, Context>;
  }
}

/**
 * rate-limit-redis's increment script, for each key in turn: the first hit of a window sets the counter
 * to 1 with the window as its expiry, a later one adds 1; each key answers its hits and the time left of
 * its window. The same key twice in one call counts twice, as two calls of the library's script would.
 */
const INCREMENT_EACH = `
local windowMs = tonumber(ARGV[1])
local replies = {}
for i, key in ipairs(KEYS) do
  local timeToExpire = redis.call("PTTL", key)
  if timeToExpire <= 0 then
    redis.call("SET", key, 1, "PX", windowMs)
    replies[2 * i - 1] = 1
    replies[2 * i] = windowMs
  else
    replies[2 * i - 1] = redis.call("INCR", key)
    replies[2 * i] = timeToExpire
  end
end
return replies`;

/** A bound on one call (its arguments, Redis's time on it) when a stalled Redis has let counts pile up. */
const MAX_KEYS_PER_CALL = 1_000;

interface Waiting {
  key: string;
  answer: (response: IncrementResponse) => void;
  fail: (error: unknown) => void;
}

export interface IncrementsPerTurn {
  /** Counts one hit of `key` (the whole Redis key) in a window of `windowMs`, with the other counts of this turn. */
  increment(key: string, windowMs: number): Promise<IncrementResponse>;
}

/**
 * The counts asked in one turn of the event loop, sent as one script call per window on a single Redis:
 * every read counts a hit, and each command costs ioredis a command object, its timers, its promises and
 * its reply's handling, which one call shares among all the reads of a turn. As with auto-pipelining, one
 * call is in flight at a time (per window); the counts asked meanwhile go in the next, sent as soon as it
 * is answered. A call that fails (Redis away, the command timeout) fails each of its counts, which the
 * limiters then count locally. Not for a Redis Cluster: one call's keys must share a slot there.
 */
export function incrementsPerTurn(redis: Redis): IncrementsPerTurn {
  redis.defineCommand(INCREMENT_EACH_COMMAND, { lua: INCREMENT_EACH });
  const windows = new Map<number, { waiting: Waiting[]; scheduled: boolean; inFlight: boolean }>();

  const send = (windowMs: number): void => {
    const window = windows.get(windowMs)!;
    window.scheduled = false;
    if (window.inFlight || window.waiting.length === 0) return;
    const batch = window.waiting.splice(0, MAX_KEYS_PER_CALL);
    window.inFlight = true;
    const keys = batch.map(({ key }) => key);
    void redis
      .rsdIncrementEach(keys.length, ...keys, windowMs)
      .then(
        (reply) => answerEach(batch, reply),
        (error: unknown) => {
          for (const { fail } of batch) fail(error);
        },
      )
      .finally(() => {
        window.inFlight = false;
        send(windowMs);
      });
  };

  return {
    increment: (key, windowMs) =>
      new Promise<IncrementResponse>((answer, fail) => {
        let window = windows.get(windowMs);
        if (!window) windows.set(windowMs, (window = { waiting: [], scheduled: false, inFlight: false }));
        window.waiting.push({ key, answer, fail });
        if (window.scheduled || window.inFlight) return;
        window.scheduled = true;
        // The end of this turn: the counts that the other requests read in it go in the same call.
        setImmediate(send, windowMs);
      }),
  };
}

/** Each count its pair of the reply, read as rate-limit-redis reads its own; a reply of another shape fails them all. */
function answerEach(batch: readonly Waiting[], reply: unknown): void {
  if (!Array.isArray(reply) || reply.length !== 2 * batch.length || !reply.every((value) => typeof value === 'number')) {
    const error = new TypeError('unexpected reply from Redis to the rate-limit counts');
    for (const { fail } of batch) fail(error);
    return;
  }
  const now = Date.now();
  const numbers: number[] = reply;
  batch.forEach(({ answer }, index) => answer({ totalHits: numbers[2 * index]!, resetTime: new Date(now + numbers[2 * index + 1]!) }));
}
