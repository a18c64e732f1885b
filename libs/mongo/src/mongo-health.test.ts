import { MongoClient } from 'mongodb';
import { pingMongo } from './mongo-health';

describe('pingMongo', () => {
  it('when no server answers, then the readiness ping rejects', async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const client = new MongoClient('mongodb://127.0.0.1:1/', { serverSelectionTimeoutMS: 300 });
    try {
      await expect(pingMongo(client.db('nowhere'))).rejects.toThrow();
    } finally {
      await client.close();
    }
  });
});
