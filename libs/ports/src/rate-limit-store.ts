/** A client's count in the current window. */
export interface ClientRateLimitInfo {
  totalHits: number;
  resetTime: Date | undefined;
}
export type IncrementResponse = ClientRateLimitInfo;

/**
 * Where a limiter counts: the shape of express-rate-limit's own `Store`, so that its MemoryStore and
 * rate-limit-redis's RedisStore plug in unchanged, without this package depending on either.
 */
export interface RateLimitStore {
  init?(options: unknown): void | Promise<void>;
  get?(key: string): Promise<ClientRateLimitInfo | undefined> | ClientRateLimitInfo | undefined;
  increment(key: string): Promise<IncrementResponse> | IncrementResponse;
  decrement(key: string): Promise<void> | void;
  resetKey(key: string): Promise<void> | void;
  resetAll?(): Promise<void> | void;
  shutdown?(): Promise<void> | void;
  /** Whether its counts are this process's alone. */
  localKeys?: boolean;
  prefix?: string;
}

/** Builds one store per limiter; `prefix` keeps the limiters' counters apart in a shared backend. */
export type RateLimitStoreFactory = (prefix: string) => RateLimitStore;
