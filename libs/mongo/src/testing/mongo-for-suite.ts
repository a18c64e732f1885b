import { MongoClient, type Db } from 'mongodb';
import { describeWithInfra, startInfra, uniqueName, type InfraTarget, type StartedServer } from '@rsd/testkit';

/**
 * One MongoDB-wire server (the environment's, or a container) and one client for the suite, from
 * `beforeAll` to `afterAll`; call it in `describeWithInfra`'s body. Returns the client's getter, and
 * the server's address for further clients (another process's configuration).
 */
export function mongoForSuite(target: () => InfraTarget): { client: () => MongoClient; url: () => string } {
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

  return {
    client: () => {
      if (!client) throw new Error('not connected');
      return client;
    },
    url: () => {
      if (!server) throw new Error('not connected');
      return server.url;
    },
  };
}

export interface SuiteMongo {
  /** A database of its own, its name unique to this run; dropped after the test that asked for it. */
  freshDatabase(): Db;
  /** The same database through a client of its own (as another process would have), closed after the test. */
  onAnotherClient(db: Db): Promise<Db>;
  /** A store contract's fixture: the store `open` opens on a fresh database, closed at cleanup. */
  storeOnAFreshDatabase<S extends { close(): Promise<void> }>(
    open: (db: Db) => Promise<S>,
  ): Promise<{ store: S; cleanup(): Promise<void> }>;
}

/**
 * `describeWithInfra` for MongoDB, on the server and client of `mongoForSuite`, where each test
 * works in databases of its own, named `<prefix>_…`.
 */
export function describeWithMongo(name: string, prefix: string, body: (mongo: SuiteMongo) => void): void {
  describeWithInfra('mongo', name, (target) => {
    const { client: connected, url } = mongoForSuite(target);
    const databases: Db[] = [];
    const otherClients: MongoClient[] = [];

    // A nested describe's afterEach runs before this one: its stores are closed by then.
    afterEach(async () => {
      await Promise.all(otherClients.splice(0).map((client) => client.close()));
      await Promise.all(databases.splice(0).map((db) => db.dropDatabase()));
    });

    const freshDatabase = (): Db => {
      const db = connected().db(uniqueName(prefix).replace(/-/g, '_'));
      databases.push(db);
      return db;
    };

    body({
      freshDatabase,
      async onAnotherClient(db) {
        const client = await MongoClient.connect(url(), { serverSelectionTimeoutMS: 5_000 });
        otherClients.push(client);
        return client.db(db.databaseName);
      },
      async storeOnAFreshDatabase(open) {
        const store = await open(freshDatabase());
        return { store, cleanup: () => store.close() };
      },
    });
  });
}

/**
 * For each test of the describe it is called in: two stores that `open` opens on one fresh database,
 * each on a client of its own, as two replicas (processes) are; closed after the test. Returns them.
 */
export function storesOnTwoClients<S extends { close(): Promise<void> }>(mongo: SuiteMongo, open: (db: Db) => Promise<S>): () => [S, S] {
  let stores: [S, S] | undefined;

  beforeEach(async () => {
    const db = mongo.freshDatabase();
    const first = await open(db);
    stores = [first, await open(await mongo.onAnotherClient(db))];
  });

  afterEach(async () => {
    await Promise.all((stores ?? []).map((store) => store.close()));
    stores = undefined;
  });

  return () => {
    if (!stores) throw new Error('the stores are open only during a test');
    return stores;
  };
}
