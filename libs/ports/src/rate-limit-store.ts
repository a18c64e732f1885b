/**
 * The rate-limit store is express-rate-limit's own `Store` interface, so its MemoryStore and
 * rate-limit-redis's RedisStore plug in unchanged.
 */
export type { Store as RateLimitStore, ClientRateLimitInfo, IncrementResponse } from 'express-rate-limit';

/** Builds one store per limiter; `prefix` keeps the limiters' counters apart in a shared backend. */
export type RateLimitStoreFactory = (prefix: string) => import('express-rate-limit').Store;
