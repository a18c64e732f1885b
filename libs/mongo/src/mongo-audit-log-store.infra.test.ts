import { describeAuditLogStoreContract } from '@rsd/testkit';
import { openMongoAuditLogStore } from './mongo-audit-log-store';
import { describeWithMongo } from './testing/mongo-for-suite';

describeWithMongo('MongoDB audit log store', 'rsd_audit', (mongo) => {
  describeAuditLogStoreContract('MongoDB', () => mongo.storeOnAFreshDatabase((db) => openMongoAuditLogStore(db)));
});
