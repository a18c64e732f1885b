import { ConfigError, loadConfig } from '@rsd/platform';
import { thrownBy } from '@rsd/testkit';
import { readApiConfigSchema } from './config';

const problemsOf = (env: NodeJS.ProcessEnv): string[] => thrownBy(() => loadConfig(readApiConfigSchema, env), ConfigError).problems;

describe('read API configuration', () => {
  test('when nothing is set, then the documented defaults apply', () => {
    expect(loadConfig(readApiConfigSchema, {})).toEqual({
      READ_API_PORT: 8080,
      READ_API_HOST: '0.0.0.0',
      CLIENT_ID_PREFIX: 'rs',
      ACCOUNT_RATE_LIMIT_PER_MINUTE: 1200,
      RATE_LIMIT_PER_MINUTE: 120,
      FAILED_AUTH_LIMIT_PER_MINUTE: 120,
      TRUST_PROXY_HOPS: 0,
      EDGE_DENY_CIDRS: [],
      EDGE_ALLOW_CIDRS: [],
      EDGE_BLOCKED_USER_AGENTS: [],
      VIEW_CACHE_TTL_MS: 30_000,
      FEED_STALENESS_BOUND_MS: 30_000,
      FEED_RECOVERY_GRACE_MS: 5_000,
      FEED_LAG_BOUND_MS: 750,
      RESPONSE_SIGNATURE_REUSE_S: 60,
      ACCESS_LOG_ENABLED: true,
      ACCESS_LOG_RETENTION_DAYS: 90,
      ACCESS_LOG_BUFFER_MAX: 10_000,
      ACCESS_LOG_BATCH_SIZE: 500,
      ACCESS_LOG_FLUSH_INTERVAL_MS: 1_000,
      LOG_LEVEL: 'info',
    });
  });

  test('when the access log is turned off or its numbers are out of range, then it is read so, or refused by name', () => {
    expect(loadConfig(readApiConfigSchema, { ACCESS_LOG_ENABLED: 'false' }).ACCESS_LOG_ENABLED).toBe(false);
    expect(() => loadConfig(readApiConfigSchema, { ACCESS_LOG_ENABLED: 'no' })).toThrow(/ACCESS_LOG_ENABLED/);
    expect(() => loadConfig(readApiConfigSchema, { ACCESS_LOG_RETENTION_DAYS: '0' })).toThrow(/ACCESS_LOG_RETENTION_DAYS/);
    expect(() => loadConfig(readApiConfigSchema, { ACCESS_LOG_BATCH_SIZE: '1001' })).toThrow(/ACCESS_LOG_BATCH_SIZE/);
  });

  test('when the edge lists are set, then they are split on commas and trimmed', () => {
    const config = loadConfig(readApiConfigSchema, {
      EDGE_DENY_CIDRS: ' 10.0.0.0/8 , 2001:db8::/32,192.0.2.1, ::ffff:198.51.100.0/120 ',
      EDGE_ALLOW_CIDRS: '0.0.0.0/0',
      EDGE_BLOCKED_USER_AGENTS: 'sqlmap, ^curl/',
    });

    expect(config.EDGE_DENY_CIDRS).toEqual(['10.0.0.0/8', '2001:db8::/32', '192.0.2.1', '::ffff:198.51.100.0/120']);
    expect(config.EDGE_ALLOW_CIDRS).toEqual(['0.0.0.0/0']);
    expect(config.EDGE_BLOCKED_USER_AGENTS).toEqual(['sqlmap', '^curl/']);
  });

  test.each([
    ['EDGE_DENY_CIDRS', '10.0.0.0/33', '"10.0.0.0/33" is not an IP address or CIDR range'],
    ['EDGE_DENY_CIDRS', '10.1', '"10.1" is not an IP address or CIDR range'],
    ['EDGE_ALLOW_CIDRS', '192.0.2.0/24,not-an-ip', '"not-an-ip" is not an IP address or CIDR range'],
    ['EDGE_BLOCKED_USER_AGENTS', 'ok,(unclosed', '"(unclosed" is not a valid regular expression'],
    ['CLIENT_ID_PREFIX', 'RS', 'must be a lowercase letter'],
    ['RATE_LIMIT_PER_MINUTE', '0', 'Too small'],
    ['FAILED_AUTH_LIMIT_PER_MINUTE', 'many', 'expected number'],
    ['TRUST_PROXY_HOPS', '-1', 'Too small'],
    ['READ_API_PORT', '70000', 'Too big'],
    ['LOG_LEVEL', 'loud', 'Invalid option'],
  ])('when %s is %j, then a ConfigError names it', (name, value, message) => {
    const problems = problemsOf({ [name]: value });

    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name}: `));
    expect(problems[0]).toContain(message);
  });

  test('when several variables are bad, then every one is reported at once', () => {
    const problems = problemsOf({ EDGE_DENY_CIDRS: 'x,y', CLIENT_ID_PREFIX: '', RATE_LIMIT_PER_MINUTE: '-5' });

    expect(problems.map((p) => p.split(':')[0])).toEqual([
      'CLIENT_ID_PREFIX',
      'RATE_LIMIT_PER_MINUTE',
      'EDGE_DENY_CIDRS',
      'EDGE_DENY_CIDRS',
    ]);
  });
});
