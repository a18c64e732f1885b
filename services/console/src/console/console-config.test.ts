import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '@rsd/platform';
import { consoleServiceConfigSchema } from '../config';
import { CALLBACK_PATH, consoleConfigSchema, DEFAULT_CLAIMS, oidcSettingsOf } from './console-config';

const ISSUER = 'https://id.acme.example/realms/acme';
const REDIRECT = 'https://credentials.acme.example/console/auth/callback';
const COMPLETE = {
  CONSOLE_OIDC_ISSUER: ISSUER,
  CONSOLE_OIDC_CLIENT_ID: 'rsd-console',
  CONSOLE_OIDC_CLIENT_SECRET: 'client-secret-from-a-kubernetes-secret',
  CONSOLE_OIDC_REDIRECT_URI: REDIRECT,
};

/** The problems loadConfig reports, as `VARIABLE: message`; none when the environment is valid. */
function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(consoleConfigSchema, env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

const variablesOf = (problems: string[]) => problems.map((problem) => problem.split(':')[0]);

describe('console config (decision 31)', () => {
  test('when nothing is set, then the config is valid, the claims are the defaults and there is no OpenID Connect sign-in', () => {
    const config = loadConfig(consoleConfigSchema, {});

    expect(config).toEqual({
      CONSOLE_OIDC_SCOPE: 'openid profile email',
      CONSOLE_OIDC_ORGANIZATION_CLAIM: DEFAULT_CLAIMS.organizationClaim,
      CONSOLE_OIDC_PERMISSIONS_CLAIM: DEFAULT_CLAIMS.permissionsClaim,
    });
    expect(DEFAULT_CLAIMS).toEqual({ organizationClaim: 'org', permissionsClaim: 'permissions' });
    expect(oidcSettingsOf(config)).toBeUndefined();
  });

  test('when the variables are set but empty, then it is as if they were not set', () => {
    const config = loadConfig(consoleConfigSchema, Object.fromEntries(Object.keys(COMPLETE).map((name) => [name, ''])));

    expect(config.CONSOLE_OIDC_ISSUER).toBeUndefined();
    expect(oidcSettingsOf(config)).toBeUndefined();
  });

  test('when the issuer, client, secret and redirect URI are set, then the settings carry them as URLs with the scope', () => {
    const settings = oidcSettingsOf(loadConfig(consoleConfigSchema, COMPLETE));

    expect(settings).toEqual({
      issuer: new URL(ISSUER),
      clientId: 'rsd-console',
      clientSecret: 'client-secret-from-a-kubernetes-secret',
      redirectUri: new URL(REDIRECT),
      scope: 'openid profile email',
    });
    expect(settings?.issuer).toBeInstanceOf(URL);
    expect(settings?.redirectUri.pathname).toBe(CALLBACK_PATH);
  });

  test('when the scope and claim names are set, then they are used', () => {
    const config = loadConfig(consoleConfigSchema, {
      ...COMPLETE,
      CONSOLE_OIDC_SCOPE: 'openid email',
      CONSOLE_OIDC_ORGANIZATION_CLAIM: 'https://acme.example/org',
      CONSOLE_OIDC_PERMISSIONS_CLAIM: 'scope',
    });

    expect(oidcSettingsOf(config)?.scope).toBe('openid email');
    expect(config.CONSOLE_OIDC_ORGANIZATION_CLAIM).toBe('https://acme.example/org');
    expect(config.CONSOLE_OIDC_PERMISSIONS_CLAIM).toBe('scope');
  });

  test('when only the issuer is set, then the client id, secret and redirect URI are each reported as required', () => {
    const problems = problemsOf({ CONSOLE_OIDC_ISSUER: ISSUER });

    expect(problems).toEqual([
      'CONSOLE_OIDC_CLIENT_ID: is required with CONSOLE_OIDC_ISSUER',
      'CONSOLE_OIDC_CLIENT_SECRET: is required with CONSOLE_OIDC_ISSUER',
      'CONSOLE_OIDC_REDIRECT_URI: is required with CONSOLE_OIDC_ISSUER',
    ]);
  });

  test.each(['CONSOLE_OIDC_CLIENT_ID', 'CONSOLE_OIDC_CLIENT_SECRET', 'CONSOLE_OIDC_REDIRECT_URI'] as const)(
    'when the issuer is set without %s, then that one is reported',
    (missing) => {
      const { [missing]: _left, ...rest } = COMPLETE;

      expect(problemsOf(rest)).toEqual([`${missing}: is required with CONSOLE_OIDC_ISSUER`]);
    },
  );

  test.each([
    'http://id.acme.example/realms/acme',
    'http://10.0.0.5:8080',
    'http://127.0.0.1.nip.io:8080',
    'http://localhost.acme.example',
    'ftp://id.acme.example',
  ])('when the issuer is %s, then it is refused: https only, plain http on loopback alone', (issuer) => {
    const problems = problemsOf({ ...COMPLETE, CONSOLE_OIDC_ISSUER: issuer });

    expect(variablesOf(problems)).toContain('CONSOLE_OIDC_ISSUER');
  });

  test.each(['http://localhost:8080/realms/test', 'http://127.0.0.1:9000', 'http://127.8.9.10', 'http://[::1]:9000/issuer', ISSUER])(
    'when the issuer is %s, then it is accepted',
    (issuer) => {
      expect(problemsOf({ ...COMPLETE, CONSOLE_OIDC_ISSUER: issuer })).toEqual([]);
    },
  );

  test('when the issuer is plain http outside loopback, then the message says why', () => {
    expect(problemsOf({ ...COMPLETE, CONSOLE_OIDC_ISSUER: 'http://id.acme.example' })).toEqual([
      'CONSOLE_OIDC_ISSUER: must be an https URL (plain http only on loopback)',
    ]);
  });

  test.each([
    'https://credentials.acme.example/console/auth',
    'https://credentials.acme.example/console/auth/callback/',
    'https://credentials.acme.example/other/console/auth/callback',
    'https://credentials.acme.example/console/auth/callbacks',
    'https://credentials.acme.example/',
  ])('when the redirect URI is %s, then it is refused: it must end in /console/auth/callback', (redirect) => {
    expect(problemsOf({ ...COMPLETE, CONSOLE_OIDC_REDIRECT_URI: redirect })).toEqual([
      `CONSOLE_OIDC_REDIRECT_URI: must end in ${CALLBACK_PATH}`,
    ]);
  });

  test('when the redirect URI is plain http outside loopback, then it is refused; on loopback it is accepted', () => {
    expect(
      variablesOf(problemsOf({ ...COMPLETE, CONSOLE_OIDC_REDIRECT_URI: 'http://credentials.acme.example/console/auth/callback' })),
    ).toEqual(['CONSOLE_OIDC_REDIRECT_URI']);
    expect(problemsOf({ ...COMPLETE, CONSOLE_OIDC_REDIRECT_URI: 'http://127.0.0.1:8081/console/auth/callback' })).toEqual([]);
    expect(problemsOf({ ...COMPLETE, CONSOLE_OIDC_REDIRECT_URI: 'http://localhost:8081/console/auth/callback' })).toEqual([]);
  });

  test('when several things are wrong, then all of them are reported at once', () => {
    const problems = problemsOf({
      CONSOLE_OIDC_ISSUER: 'http://id.acme.example',
      CONSOLE_OIDC_REDIRECT_URI: 'https://credentials.acme.example/callback',
    });

    expect(variablesOf(problems)).toEqual(expect.arrayContaining(['CONSOLE_OIDC_ISSUER', 'CONSOLE_OIDC_REDIRECT_URI']));
  });
  test('when a URL variable is not a URL at all, then it is reported as such (no TypeError at start)', () => {
    for (const [name, value] of [
      ['CONSOLE_OIDC_ISSUER', 'id.acme.example'],
      ['CONSOLE_OIDC_ISSUER', 'https://'],
      ['CONSOLE_OIDC_REDIRECT_URI', '/console/auth/callback'],
    ] as const) {
      const problems = problemsOf({ ...COMPLETE, [name]: value });
      expect(variablesOf(problems)).toEqual([name]);
    }
  });

  test('when the client, secret or redirect URI is set without an issuer, then that half configuration is reported', () => {
    const { CONSOLE_OIDC_ISSUER: _issuer, ...withoutIssuer } = COMPLETE;
    expect(variablesOf(problemsOf(withoutIssuer)).sort()).toEqual([
      'CONSOLE_OIDC_CLIENT_ID',
      'CONSOLE_OIDC_CLIENT_SECRET',
      'CONSOLE_OIDC_REDIRECT_URI',
    ]);
    expect(problemsOf({ CONSOLE_OIDC_CLIENT_ID: 'rsd-console' })).toEqual([
      'CONSOLE_OIDC_CLIENT_ID: is set but CONSOLE_OIDC_ISSUER is not',
    ]);
  });

  describe('the client secret from a file (decision 53: every secret may come from a file)', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'rsd-console-secret-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));
    const { CONSOLE_OIDC_CLIENT_SECRET: secret, ...withoutSecret } = COMPLETE;
    const fileWith = (content: string) => {
      const path = join(dir, 'client-secret');
      writeFileSync(path, content);
      return path;
    };

    test('when CONSOLE_OIDC_CLIENT_SECRET_FILE names a mounted secret, then the sign-in uses its content, its final line break dropped', () => {
      // The whole service's settings, as the runner reads them.
      const config = loadConfig(consoleServiceConfigSchema, { ...withoutSecret, CONSOLE_OIDC_CLIENT_SECRET_FILE: fileWith(`${secret}\n`) });
      const settings = oidcSettingsOf(config);

      expect(settings?.clientSecret).toBe(secret);
    });

    test('when the secret is set both ways, or its file is empty or cannot be read, then the problem names the variable and the path, never the secret', () => {
      const twice = problemsOf({ ...COMPLETE, CONSOLE_OIDC_CLIENT_SECRET_FILE: fileWith(secret) });
      const empty = problemsOf({ ...withoutSecret, CONSOLE_OIDC_CLIENT_SECRET_FILE: fileWith('\n') });
      const missing = problemsOf({ ...withoutSecret, CONSOLE_OIDC_CLIENT_SECRET_FILE: join(dir, 'absent') });

      expect(twice).toEqual([
        'CONSOLE_OIDC_CLIENT_SECRET_FILE: set either CONSOLE_OIDC_CLIENT_SECRET or CONSOLE_OIDC_CLIENT_SECRET_FILE, not both',
      ]);
      expect(empty).toContain(`CONSOLE_OIDC_CLIENT_SECRET_FILE: ${join(dir, 'client-secret')} is empty`);
      expect(missing).toContain(`CONSOLE_OIDC_CLIENT_SECRET_FILE: ${join(dir, 'absent')} cannot be read (ENOENT)`);
      expect([...twice, ...empty, ...missing].join('\n')).not.toContain(secret);
    });
  });
});
