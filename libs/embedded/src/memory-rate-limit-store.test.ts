import { describeRateLimitStoreContract } from '@rsd/testkit';
import { memoryRateLimitStores } from './memory-rate-limit-store';

describeRateLimitStoreContract('memory', () => Promise.resolve({ stores: memoryRateLimitStores, cleanup: () => Promise.resolve() }));
