import { randomBytes } from 'node:crypto';
import { loadConfig } from '@rsd/platform';
import { runtimeConfigSchema } from './runtime-config';

const schema = runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka', 'redis'] });
const MASTER_KEY = randomBytes(32).toString('base64');
const base = { KAFKA_BROKERS: '127.0.0.1:9092', SUBJECT_KEYS_MASTER_KEY: MASTER_KEY };

describe('runtimeConfigSchema: Redis and Kafka on clusters', () => {
  test('when REDIS_CLUSTER_NODES lists host:port pairs, then they are the cluster and REDIS_URL is not required', () => {
    const config = loadConfig(schema, { ...base, REDIS_CLUSTER_NODES: '127.0.0.1:26381, redis-2.internal:6379,[::1]:7000' });

    expect(config.REDIS_CLUSTER_NODES).toEqual([
      { host: '127.0.0.1', port: 26381 },
      { host: 'redis-2.internal', port: 6379 },
      { host: '::1', port: 7000 },
    ]);
    expect(config.REDIS_URL).toBeUndefined();
  });

  test('when neither REDIS_URL nor REDIS_CLUSTER_NODES is set, then the start is refused naming both', () => {
    expect(() => loadConfig(schema, base)).toThrow('REDIS_URL: is required when RUNTIME=distributed (or REDIS_CLUSTER_NODES)');
  });

  test('when an entry of REDIS_CLUSTER_NODES is not a host:port, then the start is refused naming it', () => {
    expect(() => loadConfig(schema, { ...base, REDIS_CLUSTER_NODES: '127.0.0.1:26381,redis://x:1' })).toThrow(
      'REDIS_CLUSTER_NODES: "redis://x:1" is not a host:port',
    );
    expect(() => loadConfig(schema, { ...base, REDIS_CLUSTER_NODES: 'h:70000' })).toThrow('"h:70000" is not a host:port');
  });

  test('when KAFKA_REPLICATION_FACTOR is unset, then it is left to the cluster size; set, it is that number', () => {
    expect(loadConfig(schema, { ...base, REDIS_URL: 'redis://r' }).KAFKA_REPLICATION_FACTOR).toBeUndefined();
    expect(loadConfig(schema, { ...base, REDIS_URL: 'redis://r', KAFKA_REPLICATION_FACTOR: '' }).KAFKA_REPLICATION_FACTOR).toBeUndefined();
    expect(loadConfig(schema, { ...base, REDIS_URL: 'redis://r', KAFKA_REPLICATION_FACTOR: '2' }).KAFKA_REPLICATION_FACTOR).toBe(2);
  });
});

describe('runtimeConfigSchema: a process that reaches no engine', () => {
  const shared = {
    RUNTIME: 'distributed',
    KAFKA_BROKERS: 'kafka:9092',
    KAFKA_SSL: 'true',
    KAFKA_SASL_MECHANISM: 'scram-sha-512',
    KAFKA_SASL_USERNAME: 'rsd',
    KAFKA_SASL_PASSWORD_FILE: '/nowhere/kafka-sasl-password',
  };

  test('when it shares the others’ engine settings with a secret file it does not mount, then it starts without reading it', () => {
    const config = loadConfig(runtimeConfigSchema({ defaultRuntime: 'distributed', needs: [] }), shared);

    expect(config.RUNTIME).toBe('distributed');
  });

  test('when a service that reaches Kafka names the same missing file, then its start is refused naming the variable', () => {
    expect(() => loadConfig(runtimeConfigSchema({ defaultRuntime: 'distributed', needs: ['kafka'] }), shared)).toThrow(
      'KAFKA_SASL_PASSWORD_FILE',
    );
  });
});

describe("runtimeConfigSchema: decision 56's master key of the subjects' keys", () => {
  const distributed = { KAFKA_BROKERS: '127.0.0.1:9092', REDIS_URL: 'redis://r' };

  test('when a service of the distributed runtime has none, then its start is refused naming the variable', () => {
    expect(() => loadConfig(schema, distributed)).toThrow('SUBJECT_KEYS_MASTER_KEY: is required when RUNTIME=distributed');
  });

  test('when it is set, or in the file its _FILE names, then it is the 32 bytes; a bad value is refused without being echoed', () => {
    expect(loadConfig(schema, { ...distributed, SUBJECT_KEYS_MASTER_KEY: MASTER_KEY }).subjectKeysMasterKey?.toString('base64')).toBe(
      MASTER_KEY,
    );
    const short = randomBytes(16).toString('base64');
    expect(() => loadConfig(schema, { ...distributed, SUBJECT_KEYS_MASTER_KEY: short })).toThrow(
      /^invalid configuration:\n {2}- SUBJECT_KEYS_MASTER_KEY: must be 32 bytes, base64$/,
    );
  });

  test('when a previous master key is set for a rotation, then it is read as the current one; bad, or the current one again, it is refused naming it', () => {
    const previous = randomBytes(32).toString('base64');
    const config = loadConfig(schema, { ...distributed, SUBJECT_KEYS_MASTER_KEY: MASTER_KEY, SUBJECT_KEYS_PREVIOUS_MASTER_KEY: previous });
    expect(config.subjectKeysPreviousMasterKey?.toString('base64')).toBe(previous);
    expect(loadConfig(schema, { ...distributed, SUBJECT_KEYS_MASTER_KEY: MASTER_KEY }).subjectKeysPreviousMasterKey).toBeUndefined();
    expect(() =>
      loadConfig(schema, { ...distributed, SUBJECT_KEYS_MASTER_KEY: MASTER_KEY, SUBJECT_KEYS_PREVIOUS_MASTER_KEY: previous.slice(4) }),
    ).toThrow(/^invalid configuration:\n {2}- SUBJECT_KEYS_PREVIOUS_MASTER_KEY: must be 32 bytes, base64$/);
    expect(() =>
      loadConfig(schema, { ...distributed, SUBJECT_KEYS_MASTER_KEY: MASTER_KEY, SUBJECT_KEYS_PREVIOUS_MASTER_KEY: MASTER_KEY }),
    ).toThrow('SUBJECT_KEYS_PREVIOUS_MASTER_KEY: is SUBJECT_KEYS_MASTER_KEY itself');
    expect(
      loadConfig(runtimeConfigSchema({ defaultRuntime: 'embedded', needs: ['kafka'] }), {
        SUBJECT_KEYS_PREVIOUS_MASTER_KEY: previous,
      }).subjectKeysPreviousMasterKey?.toString('base64'),
    ).toBe(previous);
  });

  test('when the embedded runtime or a process that reaches no engine has none, then it starts (the embedded runtime makes its own)', () => {
    expect(loadConfig(runtimeConfigSchema({ defaultRuntime: 'embedded', needs: ['kafka'] }), {}).subjectKeysMasterKey).toBeUndefined();
    expect(loadConfig(runtimeConfigSchema({ defaultRuntime: 'distributed', needs: [] }), {}).subjectKeysMasterKey).toBeUndefined();
  });
});
