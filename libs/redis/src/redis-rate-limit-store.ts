import type { Options } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { ClientRateLimitInfo, IncrementResponse, RateLimitStore, RateLimitStoreFactory } from '@rsd/ports';

/**
 * rate-limit-redis's RedisStore over one ioredis client: every replica that uses the same Redis and
 * the same prefix counts into the same keys, so a limit holds across all replicas. Each count is a
 * Lua script (INCR, with the window as the key's expiry), so concurrent replicas never lose a hit.
 */
export function redisRateLimitStores(redis: Redis): RateLimitStoreFactory {
  // ioredis types every reply as unknown; rate-limit-redis checks the shape of the replies it parses.
  const sendCommand = (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>;
  return (prefix) => new RedisRateLimitStore(new RedisStore({ prefix, sendCommand }), prefix);
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
  ) {}

  async init(options: Options): Promise<void> {
    this.options = options;
    // Not reachable yet is no configuration error: the first count loads the scripts again.
    await this.scriptsLoaded().catch(() => undefined);
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    await this.scriptsLoaded();
    const info = await this.store.get(key);
    // A key Redis does not hold comes back as NaN or 0 hits with a past reset time; MemoryStore says undefined.
    return info && info.totalHits > 0 && info.resetTime && info.resetTime.getTime() > Date.now() ? info : undefined;
  }

  async increment(key: string): Promise<IncrementResponse> {
    await this.scriptsLoaded();
    return this.store.increment(key);
  }

  async decrement(key: string): Promise<void> {
    await this.store.decrement(key);
  }

  async resetKey(key: string): Promise<void> {
    await this.store.resetKey(key);
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
