import { ConfigError, loadConfig } from '@rsd/platform';
import { TEST_JWT_SECRET, thrownBy } from '@rsd/testkit';
import { credentialsConfigSchema } from './config';

describe('credentials config', () => {
  test('when only the token secret is set, then every other variable has its default', () => {
    expect(loadConfig(credentialsConfigSchema, { JWT_HS256_SECRET: TEST_JWT_SECRET })).toEqual({
      CREDENTIALS_PORT: 8081,
      CREDENTIALS_HOST: '0.0.0.0',
      CLIENT_ID_PREFIX: 'rs',
      API_KEY_PREFIX: 'rsk',
      EXPIRY_CHECK_INTERVAL_MS: 1000,
      ACCESS_REVIEW_CHECK_INTERVAL_MS: 5000,
      OUTBOX_RELAY_INTERVAL_MS: 1000,
      OUTBOX_LEADER_INTERVAL_MS: 100,
      LEASE_TTL_MS: 8000,
      LEASE_RENEW_INTERVAL_MS: 2000,
      LEASE_SKEW_MARGIN_MS: 1000,
      EVENT_LOG_PUBLISH_DEADLINE_MS: 5000,
      ACCESS_LOG_RETENTION_DAYS: 90,
      AUDIT_RETENTION_DAYS: 400,
      ALERT_ADDRESS_RETENTION_DAYS: 90,
      FAILED_AUTH_LIMIT_PER_MINUTE: 120,
      SECRET_SCANNING_KEYS_URL: 'https://api.github.com/meta/public_keys/secret_scanning',
      LOG_LEVEL: 'info',
      JWT_HS256_SECRET: TEST_JWT_SECRET,
    });
  });

  test('when several variables are wrong, then all of them are reported at once', () => {
    const { problems } = thrownBy(
      () => loadConfig(credentialsConfigSchema, { CREDENTIALS_PORT: 'eighty', CLIENT_ID_PREFIX: 'RS_', EXPIRY_CHECK_INTERVAL_MS: '0' }),
      ConfigError,
    );

    expect(problems.map((p) => p.split(':')[0])).toEqual(
      expect.arrayContaining(['CREDENTIALS_PORT', 'CLIENT_ID_PREFIX', 'EXPIRY_CHECK_INTERVAL_MS', 'JWT_JWKS_URL']),
    );
  });

  test('when a retention is out of its bounds, then it is refused by name, an alert address kept less than 30 days included', () => {
    const load = (env: Record<string, string>) => () => loadConfig(credentialsConfigSchema, { JWT_HS256_SECRET: TEST_JWT_SECRET, ...env });

    expect(load({ AUDIT_RETENTION_DAYS: '0' })).toThrow(/AUDIT_RETENTION_DAYS/);
    expect(load({ AUDIT_RETENTION_DAYS: 'a year' })).toThrow(/AUDIT_RETENTION_DAYS/);
    expect(load({ ALERT_ADDRESS_RETENTION_DAYS: '29' })).toThrow(/ALERT_ADDRESS_RETENTION_DAYS/);
    expect(load({ AUDIT_RETENTION_DAYS: '30', ALERT_ADDRESS_RETENTION_DAYS: '30' })()).toMatchObject({
      AUDIT_RETENTION_DAYS: 30,
      ALERT_ADDRESS_RETENTION_DAYS: 30,
    });
  });

  test("when the console's settings are wrong, then each is refused by name", () => {
    const load = (env: Record<string, string>) => () => loadConfig(credentialsConfigSchema, { JWT_HS256_SECRET: TEST_JWT_SECRET, ...env });
    expect(load({ CONSOLE_PUBLIC_URL: 'ftp://console:8084' })).toThrow(/CONSOLE_PUBLIC_URL: must be an http\(s\) URL/);
    expect(load({ CONSOLE_JWKS_URL: 'file:///keys.json' })).toThrow(/CONSOLE_JWKS_URL: must be an http\(s\) URL/);
    expect(load({ CONSOLE_PUBLIC_KEY: 'not a key' })).toThrow(/CONSOLE_PUBLIC_KEY: must be an Ed25519 public key/);
    expect(
      load({ CONSOLE_PUBLIC_URL: 'https://console.example', CONSOLE_JWKS_URL: 'http://console:8084/.well-known/jwks.json' })(),
    ).toMatchObject({
      CONSOLE_PUBLIC_URL: 'https://console.example',
      CONSOLE_JWKS_URL: 'http://console:8084/.well-known/jwks.json',
    });
  });

  test('when the secret-scanning key list is not an http(s) URL, then it is refused', () => {
    expect(() =>
      loadConfig(credentialsConfigSchema, { JWT_HS256_SECRET: TEST_JWT_SECRET, SECRET_SCANNING_KEYS_URL: 'file:///etc/keys.json' }),
    ).toThrow(/SECRET_SCANNING_KEYS_URL/);
  });

  test('when the key prefix equals the Client ID prefix, then it is refused', () => {
    expect(() => loadConfig(credentialsConfigSchema, { JWT_HS256_SECRET: TEST_JWT_SECRET, API_KEY_PREFIX: 'rs' })).toThrow(
      /API_KEY_PREFIX/,
    );
  });
});
