import { describeLeaseStoreContract } from '@rsd/testkit';
import { createMemoryLeaseStore } from './memory-lease-store';

describeLeaseStoreContract('memory', () => Promise.resolve({ store: createMemoryLeaseStore(), cleanup: () => Promise.resolve() }));
