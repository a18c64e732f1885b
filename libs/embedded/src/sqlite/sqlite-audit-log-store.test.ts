import { describeAuditLogStoreContract } from '@rsd/testkit';
import { onATempDatabase } from '../testing/temp-database';
import { openSqliteAuditLogStore } from './sqlite-audit-log-store';

describeAuditLogStoreContract('SQLite', () => onATempDatabase('audit-log', (file) => openSqliteAuditLogStore({ file })));
