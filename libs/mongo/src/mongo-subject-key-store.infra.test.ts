import { describeSubjectKeyStoreContract } from '@rsd/testkit';
import { openMongoSubjectKeyStore } from './mongo-subject-key-store';
import { describeWithMongo } from './testing/mongo-for-suite';

describeWithMongo('MongoDB subject key store', 'rsd_subject_keys', (mongo) => {
  describeSubjectKeyStoreContract('MongoDB', () => mongo.storeOnAFreshDatabase(openMongoSubjectKeyStore));
});
