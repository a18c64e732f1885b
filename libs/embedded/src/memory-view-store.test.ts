import { describeViewStoreContract } from '@rsd/testkit';
import { createMemoryViewStore } from './memory-view-store';

describeViewStoreContract('memory', () => Promise.resolve({ store: createMemoryViewStore(), cleanup: () => Promise.resolve() }));
