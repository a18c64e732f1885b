import { KafkaJSGroupCoordinatorNotFound } from 'kafkajs';
import { MongoServerSelectionError } from 'mongodb';
import { dependencyOf } from './dependency-of';

/** kafkajs's types give this error no message argument, its code takes one (kafkajs/src/errors.js). */
const coordinatorNotFound = () =>
  new (KafkaJSGroupCoordinatorNotFound as unknown as new (message: string) => Error)('Failed to find group coordinator');

describe('dependencyOf', () => {
  test('when a start-up attempt fails on a driver, then the server it waited for is named', () => {
    expect(dependencyOf(coordinatorNotFound())).toBe('kafka');
    expect(
      dependencyOf(new MongoServerSelectionError('connect ECONNREFUSED 127.0.0.1:27017', { type: 'Unknown', servers: new Map() } as never)),
    ).toBe('mongo');
    expect(dependencyOf(new Error('appending 1 record(s) to Kafka topic "t" failed', { cause: coordinatorNotFound() }))).toBe('kafka');
  });

  test('when the error comes from elsewhere, then no server is named', () => {
    expect(dependencyOf(new Error('EACCES: permission denied'))).toBeUndefined();
    expect(dependencyOf('boom')).toBeUndefined();
  });
});
