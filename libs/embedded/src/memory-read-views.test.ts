import { describeReadViewsContract } from '@rsd/testkit';
import { createMemoryReadViews } from './memory-read-views';

describeReadViewsContract('memory', () => Promise.resolve({ views: createMemoryReadViews(), cleanup: () => Promise.resolve() }));
