import type { Options } from 'express-rate-limit';
import { Cluster } from 'ioredis';
import { RedisStore, type RedisReply, type SendCommandClusterDetails } from 'rate-limit-redis';
import type { ClientRateLimitInfo, IncrementResponse, RateLimitStore, RateLimitStoreFactory } from '@rsd/ports';
import { incrementsPerTurn, type IncrementsPerTurn } from './increments-per-turn';
import type { RedisConnection } from './redis-client';

/**
 * rate-limit-redis's RedisStore over one ioredis client, a single server's or a Redis Cluster's:
 * every replica that uses the same Redis and the same prefix counts into the same keys, so a limit
 * holds across all replicas. Each count is a Lua script (INCR, with the window as the key's expiry)
 * on one key, so concurrent replicas never lose a hit.
 *
 * A key is `<prefix>{<key>}`: the braces are a Redis Cluster hash tag, so all of one credential's
 * counters (whatever the limiter's prefix) live in one hash slot, on one primary, and each script
 * touches a single slot. On a single server the braces are only characters, and the counts of one
 * turn of the event loop go in one script call (increments-per-turn.ts), the same count for each key.
 */
export function redisRateLimitStores(redis: RedisConnection): RateLimitStoreFactory {
  const sendCommandCluster = (details: SendCommandClusterDetails) => sendCommand(redis, details);
  const together = redis instanceof Cluster ? undefined : incrementsPerTurn(redis);
  return (prefix) => new RedisRateLimitStore(new RedisStore({ prefix, sendCommandCluster }), prefix, together);
}

/** The Redis key of `key` under `prefix` (the store adds the prefix): its hash tag is the whole key. */
export const hashTagged = (key: string): string => `{${key}}`;

/**
 * Sends one of RedisStore's commands. A script is loaded on every primary of a cluster, since the
 * store loads it once and then runs it on whichever primary holds a key's slot (and loads it again,
 * through here, when a primary answers NOSCRIPT: a replica promoted since, or a restarted node).
 * ioredis types every reply as unknown; rate-limit-redis checks the shape of the replies it parses.
 */
async function sendCommand(redis: RedisConnection, { command }: SendCommandClusterDetails): Promise<RedisReply> {
  const [name = '', ...args] = command;
  if (redis instanceof Cluster && name.toUpperCase() === 'SCRIPT') {
    // A primary that is away gets it when it answers NOSCRIPT later; the others have it now.
    const loaded = await Promise.allSettled(redis.nodes('master').map((node) => node.call(name, ...args)));
    const done = loaded.find((outcome) => outcome.status === 'fulfilled');
    if (done) return done.value as RedisReply;
    throw loaded.find((outcome) => outcome.status === 'rejected')?.reason ?? new Error('no Redis Cluster primary is connected');
  }
  return (await redis.call(name, ...args)) as RedisReply;
}

/**
 * RedisStore loads its Lua scripts once, in `init`, and keeps the failed promise when Redis was not
 * reachable then: every later count would fail until a restart. express-rate-limit calls `init` when
 * the limiter is built, usually before the client has connected, so this wrapper loads the scripts
 * again on the next call whenever the last load failed.
 */
class RedisRateLimitStore implements RateLimitStore {
  /** Counts live in Redis: another instance with the same prefix shares them. */
  readonly localKeys = false;
  private options: Options | undefined;
  private scripts: Promise<void> | undefined;

  constructor(
    private readonly store: RedisStore,
    readonly prefix: string,
    /** On a single Redis: counts sent with the others of their turn, under the key the store would use. */
    private readonly together?: IncrementsPerTurn,
  ) {}

  async init(options: Options): Promise<void> {
    this.options = options;
    // Not reachable yet is no configuration error: the first count loads the scripts again.
    await this.scriptsLoaded().catch(() => undefined);
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    await this.scriptsLoaded();
    const info = await this.store.get(hashTagged(key));
    // A key Redis does not hold comes back as NaN or 0 hits with a past reset time; MemoryStore says undefined.
    return info && info.totalHits > 0 && info.resetTime && info.resetTime.getTime() > Date.now() ? info : undefined;
  }

  async increment(key: string): Promise<IncrementResponse> {
    if (this.together) {
      if (!this.options) throw new Error('rate-limit store used before init');
      return this.together.increment(this.store.prefixKey(hashTagged(key)), this.options.windowMs);
    }
    await this.scriptsLoaded();
    return this.store.increment(hashTagged(key));
  }

  async decrement(key: string): Promise<void> {
    await this.store.decrement(hashTagged(key));
  }

  async resetKey(key: string): Promise<void> {
    await this.store.resetKey(hashTagged(key));
  }

  private scriptsLoaded(): Promise<void> {
    const options = this.options;
    if (!options) return Promise.reject(new Error('rate-limit store used before init'));
    this.scripts ??= this.store.init(options).catch((error: unknown) => {
      this.scripts = undefined;
      throw error;
    });
    return this.scripts;
  }
}
