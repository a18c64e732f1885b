import { describeOffboardingStoreContract } from '@rsd/testkit';
import { openMongoOffboardingStore } from './mongo-offboarding-store';
import { describeWithMongo } from './testing/mongo-for-suite';

describeWithMongo('MongoDB offboarding store', 'rsd_offboardings', (mongo) => {
  describeOffboardingStoreContract('MongoDB', () => mongo.storeOnAFreshDatabase((db) => openMongoOffboardingStore(db)));
});
