import { describeLeaseStoreContract } from '@rsd/testkit';
import { openMongoLeaseStore } from './mongo-lease-store';
import { describeWithMongo } from './testing/mongo-for-suite';

describeWithMongo('MongoDB lease store', 'rsd_leases', (mongo) => {
  describeLeaseStoreContract('MongoDB', () => mongo.storeOnAFreshDatabase(openMongoLeaseStore));
});
