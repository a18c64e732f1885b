import { MongoClient } from 'mongodb';
import { startInfra, type InfraTarget, type StartedServer } from '@rsd/testkit';

/**
 * One MongoDB-wire server (the environment's, or a container) and one client for the suite, from
 * `beforeAll` to `afterAll`; call it in `describeWithInfra`'s body. Returns the client's getter.
 */
export function mongoForSuite(target: () => InfraTarget): () => MongoClient {
  let server: StartedServer | undefined;
  let client: MongoClient | undefined;

  beforeAll(async () => {
    server = await startInfra('mongo', target());
    client = await MongoClient.connect(server.url, { serverSelectionTimeoutMS: 5_000 });
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  return () => {
    if (!client) throw new Error('not connected');
    return client;
  };
}
