import { MemoryStore } from 'express-rate-limit';
import type { RateLimitStoreFactory } from '@rsd/ports';

/**
 * express-rate-limit's own MemoryStore: counts live in this process only, which is exactly the
 * embedded runtime's reach. Each limiter gets its own instance, so the prefix is not needed to
 * keep their counters apart.
 */
export const memoryRateLimitStores: RateLimitStoreFactory = () => new MemoryStore();
