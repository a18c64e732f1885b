import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { MongoClient } from 'mongodb';
import { createKafkaClient } from '@rsd/kafka';
import { createLogger, type TlsOptions } from '@rsd/platform';
import { closeRedisClient, createRedisClient, firstConnectionError } from '@rsd/redis';
import { testCertificateAuthority } from '@rsd/testkit';
import { engineRefusal } from './engine-refusal';

const silent = createLogger('test', 'silent');
const portOf = (server: TcpServer) => (server.address() as AddressInfo).port;

/**
 * Each engine's driver, given one authority, dials a server whose certificate another authority signed;
 * and ioredis meets a server that refuses its password. What the drivers throw is read as the one
 * line an operator gets.
 */
describe('engineRefusal: an engine that refuses this process ends its start with the variable to fix', () => {
  let dir: string;
  let trusted: TlsOptions;
  let server: Server;
  let address: string;
  let wrongPassword: TcpServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engine-refusal-'));
    trusted = { ca: readFileSync(testCertificateAuthority(dir, 'trusted-ca').caFile, 'utf8'), rejectUnauthorized: true };
    const issued = testCertificateAuthority(dir, 'other-ca').issue('impostor');
    server = createServer({ cert: readFileSync(issued.certFile), key: readFileSync(issued.keyFile) }, (socket) => socket.destroy());
    // The client refuses the certificate and ends the handshake: nothing to report here.
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    address = `127.0.0.1:${portOf(server)}`;
    // A Redis that answers every command as one with ACLs does to a wrong password.
    wrongPassword = createTcpServer((socket) =>
      socket.on('data', () => socket.write('-WRONGPASS invalid username-password pair or user is disabled.\r\n')),
    );
    await new Promise<void>((listening) => wrongPassword.listen(0, '127.0.0.1', listening));
  });

  afterAll(async () => {
    await new Promise((closed) => server.close(closed));
    await new Promise((closed) => wrongPassword.close(closed));
    rmSync(dir, { recursive: true, force: true });
  });

  const untrusted = (variable: string, server: string) =>
    `${variable}: ${server} presented a certificate this process does not trust (unable to verify the first certificate): ` +
    `${variable} must name the authority that signed it (unset: the system's authorities)`;

  test('when a Kafka broker presents a certificate of another authority, then kafkajs fails and the line names KAFKA_SSL_CA_FILE', async () => {
    const { kafka } = createKafkaClient({
      clientId: 'refusal-test',
      brokers: [address],
      log: silent,
      kafka: { ssl: trusted, retry: { retries: 0 } },
    });
    const admin = kafka.admin();
    const error: unknown = await admin.connect().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    await admin.disconnect();

    expect(engineRefusal(error)?.problems).toEqual([untrusted('KAFKA_SSL_CA_FILE', 'a Kafka broker')]);
  });

  test('when the MongoDB server presents a certificate of another authority, then the driver fails and the line names MONGO_TLS_CA_FILE', async () => {
    const error: unknown = await MongoClient.connect(`mongodb://${address}/?tls=true`, {
      ...trusted,
      serverSelectionTimeoutMS: 1_000,
    }).then(
      (client) => client.close(),
      (failure: unknown) => failure,
    );

    expect(engineRefusal(error)?.problems).toEqual([untrusted('MONGO_TLS_CA_FILE', 'the MongoDB server')]);
  });

  test('when Redis presents a certificate of another authority, then the first connection fails and the line names REDIS_TLS_CA_FILE', async () => {
    const redis = createRedisClient(`rediss://${address}`, silent, { connection: { tls: trusted } });
    const error = await firstConnectionError(redis, 5_000);
    await closeRedisClient(redis);

    expect(engineRefusal(error, 'redis')?.problems).toEqual([untrusted('REDIS_TLS_CA_FILE', 'Redis')]);
  });

  test('when Redis refuses the password, then the line names REDIS_PASSWORD and quotes the refusal, not the password', async () => {
    const redis = createRedisClient(`redis://127.0.0.1:${portOf(wrongPassword)}`, silent, {
      connection: { username: 'rsd', password: 'not-this-one' },
    });
    const error = await firstConnectionError(redis, 5_000);
    await closeRedisClient(redis);

    const refusal = engineRefusal(error, 'redis');
    expect(refusal?.problems).toEqual([
      'REDIS_PASSWORD: Redis refused REDIS_USERNAME and REDIS_PASSWORD (WRONGPASS invalid username-password pair or user is disabled.)',
    ]);
    expect(refusal?.message).not.toContain('not-this-one');
  });

  test('when a server is only away, then it is no refusal: the start waits for it as before', async () => {
    const redis = createRedisClient('redis://127.0.0.1:1', silent);
    const error = await firstConnectionError(redis, 5_000);
    await closeRedisClient(redis);

    expect(error).toBeDefined();
    expect(engineRefusal(error, 'redis')).toBeUndefined();
  });
});
