import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@rsd/platform';
import { testCertificateAuthority, type IssuedCertificate } from '@rsd/testkit';
import { runtimeConfigSchema } from './runtime-config';

const schema = runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'mongo', 'redis'] });
const base = {
  KAFKA_BROKERS: '127.0.0.1:9093',
  MONGO_URL: 'mongodb://127.0.0.1:27017/',
  REDIS_URL: 'redis://127.0.0.1:6379',
  SUBJECT_KEYS_MASTER_KEY: randomBytes(32).toString('base64'),
};
const PASSWORD = 'p4ss-w0rd-never-echoed';

describe('runtimeConfigSchema: TLS and credentials to the engines (decision 53)', () => {
  let dir: string;
  let caFile: string;
  let client: IssuedCertificate;
  let other: IssuedCertificate;
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'engine-settings-'));
    const authority = testCertificateAuthority(dir, 'settings-ca');
    caFile = authority.caFile;
    client = authority.issue('client');
    other = authority.issue('other');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('when nothing of TLS or SASL is set, then every engine is reached as before, in plaintext and without credentials', () => {
    expect(loadConfig(schema, base).engines).toEqual({ kafka: {}, mongo: {}, redis: {} });
  });

  test('when Kafka is set for SCRAM over mutual TLS, then kafkajs gets the files read and verification on', () => {
    const { kafka } = loadConfig(schema, {
      ...base,
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: caFile,
      KAFKA_SSL_CERT_FILE: client.certFile,
      KAFKA_SSL_KEY_FILE: client.keyFile,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'rsd',
      KAFKA_SASL_PASSWORD: PASSWORD,
    }).engines;

    expect(kafka.ssl).toEqual({
      ca: readFileSync(caFile, 'utf8'),
      cert: readFileSync(client.certFile, 'utf8'),
      key: readFileSync(client.keyFile, 'utf8'),
      rejectUnauthorized: true,
    });
    expect(kafka.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'rsd', password: PASSWORD });
  });

  test('when a secret is given as a file (<VARIABLE>_FILE), then its content is the value, without its final line break', () => {
    const config = loadConfig(schema, {
      ...base,
      MONGO_URL: undefined,
      MONGO_URL_FILE: file('mongo-url', `mongodb://rsd:${PASSWORD}@db.internal:27017/?tls=true\n`),
      KAFKA_SSL: 'true',
      KAFKA_SASL_MECHANISM: 'plain',
      KAFKA_SASL_USERNAME_FILE: file('kafka-user', 'rsd\n'),
      KAFKA_SASL_PASSWORD_FILE: file('kafka-password', PASSWORD),
      REDIS_PASSWORD_FILE: file('redis-password', `${PASSWORD}\r\n`),
    });

    expect(config.MONGO_URL).toBe(`mongodb://rsd:${PASSWORD}@db.internal:27017/?tls=true`);
    expect(config.engines.kafka.sasl).toEqual({ mechanism: 'plain', username: 'rsd', password: PASSWORD });
    expect(config.engines.redis.password).toBe(PASSWORD);
  });

  test('when a secret is set twice, or its file cannot be read or is empty, then the start is refused naming the variable, never the value', () => {
    const refusal = () =>
      loadConfig(schema, {
        ...base,
        REDIS_PASSWORD: PASSWORD,
        REDIS_PASSWORD_FILE: file('twice', PASSWORD),
        KAFKA_SASL_MECHANISM: 'scram-sha-256',
        KAFKA_SASL_USERNAME: 'rsd',
        KAFKA_SASL_PASSWORD_FILE: join(dir, 'missing'),
        MONGO_URL: undefined,
        MONGO_URL_FILE: file('empty', '\n'),
      });

    expect(refusal).toThrow('REDIS_PASSWORD_FILE: set either REDIS_PASSWORD or REDIS_PASSWORD_FILE, not both');
    expect(refusal).toThrow(`KAFKA_SASL_PASSWORD_FILE: ${join(dir, 'missing')} cannot be read (ENOENT)`);
    expect(refusal).toThrow(`MONGO_URL_FILE: ${join(dir, 'empty')} is empty`);
    expect(refusal).not.toThrow(PASSWORD);
  });

  test('when a certificate file is wrong, or a client certificate comes without its key, then the start is refused naming the variable', () => {
    const refusal = () =>
      loadConfig(schema, {
        ...base,
        KAFKA_SSL: 'true',
        KAFKA_SSL_CA_FILE: file('not-pem', 'hello'),
        KAFKA_SSL_CERT_FILE: client.certFile,
        KAFKA_SSL_KEY_FILE: other.keyFile,
        REDIS_URL: 'rediss://127.0.0.1:6380',
        REDIS_TLS_CA_FILE: join(dir, 'absent.crt'),
      });

    expect(refusal).toThrow(`KAFKA_SSL_CA_FILE: ${join(dir, 'not-pem')} holds no PEM certificate`);
    expect(refusal).toThrow(`KAFKA_SSL_KEY_FILE: ${other.keyFile} is not the private key of KAFKA_SSL_CERT_FILE's certificate`);
    expect(refusal).toThrow(`REDIS_TLS_CA_FILE: ${join(dir, 'absent.crt')} cannot be read (ENOENT)`);
    expect(() => loadConfig(schema, { ...base, KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: client.certFile })).toThrow(
      'KAFKA_SSL_CERT_FILE: is set without its private key',
    );
  });

  test('when an authority is given for a connection that is not TLS, then the start is refused rather than the file ignored', () => {
    const refusal = () => loadConfig(schema, { ...base, KAFKA_SSL_CA_FILE: caFile, MONGO_TLS_CA_FILE: caFile, REDIS_TLS_CA_FILE: caFile });

    expect(refusal).toThrow('KAFKA_SSL_CA_FILE: is set but the connection is not TLS: set KAFKA_SSL=true');
    expect(refusal).toThrow('MONGO_TLS_CA_FILE: is set but the connection is not TLS: add tls=true to MONGO_URL');
    expect(refusal).toThrow('REDIS_TLS_CA_FILE: is set but the connection is not TLS: set REDIS_TLS=true or use rediss://');
  });

  test('when SASL is half configured, or PLAIN would send the password outside TLS, then the start is refused', () => {
    expect(() => loadConfig(schema, { ...base, KAFKA_SASL_USERNAME: 'rsd', KAFKA_SASL_PASSWORD: PASSWORD })).toThrow(
      'KAFKA_SASL_MECHANISM: is required with a SASL user name or password',
    );
    expect(() => loadConfig(schema, { ...base, KAFKA_SASL_MECHANISM: 'scram-sha-512' })).toThrow(
      'KAFKA_SASL_PASSWORD: is required with KAFKA_SASL_MECHANISM',
    );
    expect(() => loadConfig(schema, { ...base, KAFKA_SASL_MECHANISM: 'gssapi' })).toThrow(
      'KAFKA_SASL_MECHANISM: must be plain, scram-sha-256 or scram-sha-512',
    );
    expect(() =>
      loadConfig(schema, { ...base, KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'rsd', KAFKA_SASL_PASSWORD: PASSWORD }),
    ).toThrow('KAFKA_SASL_MECHANISM: plain sends the password as it is: it needs KAFKA_SSL=true');
  });

  test('when MONGO_URL asks for TLS, then the driver verifies the server with MONGO_TLS_CA_FILE; an option that turns the check off is refused', () => {
    const tlsUrl = `mongodb://rsd:${PASSWORD}@127.0.0.1:27017/?tls=true&authMechanism=PLAIN`;
    expect(loadConfig(schema, { ...base, MONGO_URL: tlsUrl, MONGO_TLS_CA_FILE: caFile }).engines.mongo).toEqual({
      tls: true,
      ca: readFileSync(caFile, 'utf8'),
      rejectUnauthorized: true,
    });
    // mongodb+srv:// is TLS unless told otherwise.
    expect(loadConfig(schema, { ...base, MONGO_URL: 'mongodb+srv://cluster0.example.net/' }).engines.mongo).toEqual({
      tls: true,
      rejectUnauthorized: true,
    });
    for (const option of ['tlsInsecure=true', 'tlsAllowInvalidCertificates=true', 'TLSALLOWINVALIDHOSTNAMES=true', 'sslValidate=false']) {
      const refusal = () => loadConfig(schema, { ...base, MONGO_URL: `${tlsUrl}&${option}` });
      expect(refusal).toThrow("turns the check of the server's certificate off, which is refused");
      expect(refusal).not.toThrow(PASSWORD);
    }
  });

  test('when Redis is rediss:// or REDIS_TLS with an ACL user, then ioredis gets them, for one server and for a cluster', () => {
    expect(
      loadConfig(schema, { ...base, REDIS_URL: 'rediss://cache.internal:6380/0', REDIS_USERNAME: 'rsd', REDIS_PASSWORD: PASSWORD }).engines
        .redis,
    ).toEqual({ tls: { rejectUnauthorized: true }, username: 'rsd', password: PASSWORD });
    expect(
      loadConfig(schema, {
        ...base,
        REDIS_URL: '',
        REDIS_CLUSTER_NODES: '127.0.0.1:26391,127.0.0.1:26392',
        REDIS_TLS: 'true',
        REDIS_TLS_CA_FILE: caFile,
        REDIS_USERNAME: 'rsd',
        REDIS_PASSWORD: PASSWORD,
      }).engines.redis,
    ).toEqual({ tls: { ca: readFileSync(caFile, 'utf8'), rejectUnauthorized: true }, username: 'rsd', password: PASSWORD });
  });

  test('when REDIS_URL contradicts the REDIS_* variables or carries query options, then the start is refused', () => {
    const refusal = (env: Record<string, string>) => () => loadConfig(schema, { ...base, ...env });

    expect(refusal({ REDIS_URL: 'rediss://h:6380', REDIS_TLS: 'false' })).toThrow('REDIS_TLS: is false but REDIS_URL is rediss:// (TLS)');
    expect(refusal({ REDIS_URL: `redis://:${PASSWORD}@h:6379`, REDIS_PASSWORD: PASSWORD })).toThrow(
      'REDIS_PASSWORD: is set and REDIS_URL carries a password too: give it once',
    );
    expect(refusal({ REDIS_URL: 'rediss://h:6380?tls=insecure' })).toThrow('REDIS_URL: takes no query options: use the REDIS_* variables');
    expect(refusal({ REDIS_URL: 'http://h:6379' })).toThrow('REDIS_URL: must start with redis:// or rediss:// (TLS)');
  });

  test('when the runtime is embedded, then none of the engines settings is read', () => {
    const embedded = runtimeConfigSchema({ defaultRuntime: 'embedded', needs: [] });
    const config = loadConfig(embedded, { KAFKA_SSL_CA_FILE: join(dir, 'absent'), MONGO_URL_FILE: join(dir, 'absent') });
    expect(config.engines).toEqual({ kafka: {}, mongo: {}, redis: {} });
  });
});
