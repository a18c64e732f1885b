import { describeOffboardingStoreContract } from '@rsd/testkit';
import { onATempDatabase } from '../testing/temp-database';
import { openSqliteOffboardingStore } from './sqlite-offboarding-store';

describeOffboardingStoreContract('SQLite', () => onATempDatabase('offboardings', (file) => openSqliteOffboardingStore({ file })));
