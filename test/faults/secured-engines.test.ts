import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { Kafka, logLevel, type KafkaConfig } from 'kafkajs';
import { MongoClient, type MongoClientOptions } from 'mongodb';
import { createLogger } from '@rsd/platform';
import { closeRedisClient, createRedisClient, firstConnectionError } from '@rsd/redis';
import { testCertificateAuthority } from '@rsd/testkit';
import { clusteredEngines, type ClusteredEngines } from '../support/clustered-engines';
import { serviceRefusal } from '../support/service-process';

/**
 * Decision 53 on the engines of `scripts/infra.sh cluster` (secured by default): each refuses a
 * client in plaintext, one without credentials and one with a wrong password, and lets the product's
 * own settings in; the product, given an authority that did not sign the engines' certificates or a
 * wrong password, does not start and says which variable to fix.
 */

const WRONG = 'not-the-password';
const silent = createLogger('test', 'silent');

/** A kafkajs client that gives up at once: the refusals come on the first connection. */
async function kafkaConnects(config: Omit<KafkaConfig, 'clientId'>): Promise<void> {
  const kafka = new Kafka({
    clientId: 'secured-engines-test',
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 5_000,
    retry: { retries: 0 },
    ...config,
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.listTopics();
  } finally {
    await admin.disconnect();
  }
}

/** One read through the MongoDB driver: FerretDB checks the credentials (with its PostgreSQL) at the first command. */
async function mongoReads(url: string, options: MongoClientOptions): Promise<void> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 3_000, ...options });
  try {
    await client.connect();
    await client.db('secured_engines_test').collection('probe').findOne({});
  } finally {
    await client.close();
  }
}

/** A Redis client for one node that neither queues nor reconnects. */
function redisNode(engines: ClusteredEngines, options: RedisOptions): Redis {
  const { host, port } = engines.redisNodes[0]!;
  return new Redis({
    host,
    port,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    ...options,
  });
}

describe('the secured clustered engines (decision 53)', () => {
  let engines: ClusteredEngines;
  let dir: string;
  let otherAuthority: string;

  beforeAll(() => {
    engines = clusteredEngines();
    if (!engines.connections.kafka.sasl) {
      throw new Error(
        'the cluster runs in plaintext (cluster up --plaintext): this suite needs it secured (cluster down, then cluster up)',
      );
    }
    dir = mkdtempSync(join(tmpdir(), 'secured-engines-'));
    otherAuthority = testCertificateAuthority(dir, 'another-authority').caFile;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe('Kafka: SASL (SCRAM-SHA-512) over TLS only', () => {
    test('when a client comes in plaintext, then the brokers do not answer it', async () => {
      await expect(kafkaConnects({ brokers: engines.brokers })).rejects.toThrow(/Connection|closed|timeout|timed out/i);
    });

    test('when a client comes over TLS without credentials, then the brokers do not answer it', async () => {
      await expect(kafkaConnects({ brokers: engines.brokers, ssl: engines.connections.kafka.ssl })).rejects.toThrow(
        /Connection|closed|timeout|timed out/i,
      );
    });

    test('when a client gives a wrong password, then SCRAM authentication fails', async () => {
      const sasl = { mechanism: 'scram-sha-512' as const, username: engines.connections.kafka.sasl!.username, password: WRONG };
      await expect(kafkaConnects({ brokers: engines.brokers, ssl: engines.connections.kafka.ssl, sasl })).rejects.toThrow(
        'SASL SCRAM SHA512 authentication failed',
      );
    });

    test("when a client comes with the product's settings, then it is answered", async () => {
      await expect(kafkaConnects({ brokers: engines.brokers, ...engines.connections.kafka })).resolves.toBeUndefined();
    });
  });

  describe('Redis: TLS and the ACL user only', () => {
    test('when a client comes in plaintext, then the node drops the connection', async () => {
      const redis = redisNode(engines, {});
      await expect(redis.connect().then(() => redis.ping())).rejects.toThrow();
      redis.disconnect();
    });

    test('when a client comes over TLS without credentials, then every command is refused NOAUTH', async () => {
      // No ready check (an INFO, refused too): the PING is what is refused.
      const redis = redisNode(engines, { tls: engines.connections.redis.tls, enableReadyCheck: false });
      await redis.connect();
      await expect(redis.ping()).rejects.toThrow(/^NOAUTH/);
      redis.disconnect();
    });

    test('when a client gives a wrong password, then AUTH is refused WRONGPASS', async () => {
      const { host, port } = engines.redisNodes[0]!;
      const redis = createRedisClient(`rediss://${host}:${port}`, silent, {
        connection: { ...engines.connections.redis, password: WRONG },
      });
      const error = await firstConnectionError(redis, 10_000);
      await closeRedisClient(redis);
      expect(error?.message).toMatch(/^WRONGPASS/);
    });

    test("when a client comes with the product's settings, then it is answered", async () => {
      const redis = redisNode(engines, engines.connections.redis);
      await redis.connect();
      await expect(redis.ping()).resolves.toBe('PONG');
      redis.disconnect();
    });
  });

  describe('MongoDB-wire server: TLS only, its user and password', () => {
    const withoutCredentials = () => engines.mongoUrl.replace(/\/\/[^@/]+@/, '//').replace(/[?&]authMechanism=PLAIN/, '');

    test('when a client comes in plaintext, then no server is found', async () => {
      await expect(mongoReads(withoutCredentials().replace(/\?.*$/, ''), {})).rejects.toThrow();
    });

    test('when a client comes over TLS without credentials, then its read is refused', async () => {
      await expect(mongoReads(`${withoutCredentials()}`, engines.connections.mongo)).rejects.toThrow(/authentication|password/i);
    });

    test('when a client gives a wrong password, then its read is refused', async () => {
      const wrong = engines.mongoUrl.replace(/:([^:@/]+)@/, `:${WRONG}@`);
      await expect(mongoReads(wrong, engines.connections.mongo)).rejects.toThrow(/authentication|password/i);
    });

    test("when a client comes with the product's settings, then it reads", async () => {
      await expect(mongoReads(engines.mongoUrl, engines.connections.mongo)).resolves.toBeUndefined();
    });
  });

  describe('the product on them', () => {
    /** The read API (Kafka, MongoDB and Redis) on the cluster's settings, one of them changed. */
    const readApiWith = (changed: Record<string, string>) =>
      serviceRefusal('read-api', {
        RUNTIME: 'distributed',
        READ_API_PORT: '18499',
        READ_API_HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        ...changed,
      });

    test('when KAFKA_SSL_CA_FILE is an authority that did not sign the brokers, then the service exits 1 saying so', async () => {
      const { code, output } = await readApiWith({ KAFKA_SSL_CA_FILE: otherAuthority });

      expect(code).toBe(1);
      expect(output).toContain('invalid configuration:');
      // The brokers send their certificate alone (Node: "unable to verify the first certificate"); the reason is Node's.
      expect(output).toMatch(
        /KAFKA_SSL_CA_FILE: a Kafka broker presented a certificate this process does not trust \([^)]+\): KAFKA_SSL_CA_FILE must name the authority that signed it \(unset: the system's authorities\)/,
      );
    });

    test('when MONGO_TLS_CA_FILE is an authority that did not sign the server, then the service exits 1 saying so', async () => {
      const { code, output } = await readApiWith({ MONGO_TLS_CA_FILE: otherAuthority });

      expect(code).toBe(1);
      expect(output).toContain('MONGO_TLS_CA_FILE: the MongoDB server presented a certificate this process does not trust (');
    });

    test('when REDIS_TLS_CA_FILE is an authority that did not sign the nodes, then the service exits 1 saying so', async () => {
      const { code, output } = await readApiWith({ REDIS_TLS_CA_FILE: otherAuthority });

      expect(code).toBe(1);
      expect(output).toContain('REDIS_TLS_CA_FILE: Redis presented a certificate this process does not trust (');
    });

    test('when the Kafka password is wrong, then the service exits 1 naming the credentials, never the password', async () => {
      const password = join(dir, 'wrong-kafka-password');
      writeFileSync(password, `${WRONG}\n`);
      const { code, output } = await readApiWith({ KAFKA_SASL_PASSWORD_FILE: password });

      expect(code).toBe(1);
      expect(output).toContain(
        'KAFKA_SASL_PASSWORD: a Kafka broker refused KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD (SASL SCRAM SHA512 authentication failed',
      );
      expect(output).not.toContain(WRONG);
    });

    test("when MONGO_URL's password is wrong, then the service exits 1 naming the credentials, never the password", async () => {
      const url = join(dir, 'wrong-mongo-url');
      writeFileSync(url, engines.mongoUrl.replace(/:([^:@/]+)@/, `:${WRONG}@`));
      const { code, output } = await readApiWith({ MONGO_URL_FILE: url });

      expect(code).toBe(1);
      expect(output).toContain("MONGO_URL: the MongoDB server refused MONGO_URL's user and password (");
      expect(output).not.toContain(WRONG);
    });
  });
});
