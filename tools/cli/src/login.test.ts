import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProgram, PRODUCT_COMMANDS, runCli, type CliEdition } from './cli';
import { fetchClientToken } from './login';
import { addProductCommands } from './product-commands';

/** One request the deployment below received. */
interface Received {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

/**
 * A deployment on 127.0.0.1 as the CLI meets it over real HTTP: an OAuth token endpoint (client `engine`, secret
 * `s3cret:+&`, client_secret_basic), the credentials service's list of an organization's grants (refused with a
 * request id unless the bearer is one it gave or `given-token`), and score ingest.
 */
async function deployment(): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const issued = new Set(['given-token']);
  const server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      received.push({
        method: request.method ?? '',
        path,
        authorization: request.headers.authorization,
        contentType: request.headers['content-type'],
        body,
      });
      const answer = (status: number, value: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req-test-1' }).end(JSON.stringify(value));
      };
      if (path === '/oauth/token') {
        const expected = `Basic ${Buffer.from('engine:s3cret%3A%2B%26').toString('base64')}`;
        if (request.headers.authorization !== expected) return answer(401, { error: 'invalid_client', error_description: 'bad client' });
        const token = `fetched-${issued.size}`;
        issued.add(token);
        return answer(200, { access_token: token, token_type: 'Bearer', expires_in: 300 });
      }
      const bearer = request.headers.authorization?.replace(/^Bearer /, '') ?? '';
      if (!issued.has(bearer)) return answer(401, { code: 'INVALID_TOKEN', message: 'the token is not valid', requestId: 'req-test-1' });
      if (path === '/v1/organizations/org-a/authorizations') return answer(200, { authorizations: [grant('cid_1'), grant('cid_2')] });
      if (path === '/v1/scores') return answer(202, { accepted: (JSON.parse(body) as { scores: unknown[] }).scores.length });
      return answer(404, { code: 'NOT_FOUND', message: 'no such resource', requestId: 'req-test-1' });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

function grant(clientId: string) {
  return {
    clientId,
    recipientName: `Recipient, "${clientId}"`,
    recipientType: 'auditor',
    status: 'active',
    scopes: ['qr_score', 'score_trend'],
    expiresAt: null,
    lastUsedAt: null,
    usage: { last24h: 0, last30d: 2 },
  };
}

/** `rsd args` in the process, over real HTTP, with `env` (its own config directory) and `stdin`. */
async function rsd(
  args: string[],
  env: Record<string, string>,
  { stdin = '', terminal = false, edition = {} }: { stdin?: string; terminal?: boolean; edition?: CliEdition } = {},
) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(
    args,
    {
      env,
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      untilStopped: () => Promise.resolve(),
      stdin: () => Promise.resolve(stdin),
      stderrIsTerminal: terminal,
      transport: { maxRetries: 0 },
    },
    edition,
  );
  return { code, stdout, stderr };
}

describe('rsd login and profiles', () => {
  let home: string;
  let product: Awaited<ReturnType<typeof deployment>>;
  let env: Record<string, string>;
  const config = () => join(home, 'config', 'rsd', 'config.toml');
  const login = (args: string[], stdin = '') =>
    rsd(['login', '--api-url', product.url, '--credentials-url', product.url, '--ingest-url', product.url, ...args], env, { stdin });
  /** `rsd login` with the OAuth client `engine`, its secret `secret` in a file. */
  const loginClient = async (secret: string, args: string[] = []) => {
    await writeFile(join(home, 'secret'), secret);
    const client = ['--client-id', 'engine', '--client-secret-file', join(home, 'secret'), '--token-url', `${product.url}/oauth/token`];
    return login([...client, ...args]);
  };

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'rsd-login-'));
    product = await deployment();
    env = { XDG_CONFIG_HOME: join(home, 'config'), HOME: home };
  });
  afterEach(async () => {
    await new Promise((done) => product.server.close(done));
    await rm(home, { recursive: true, force: true });
  });

  test('when a token is given on stdin, then the profile is kept mode 0600 in a 0700 directory, the token never printed, and used', async () => {
    const loggedIn = await login(['--profile', 'ci', '--token-stdin'], 'given-token\n');

    expect(loggedIn).toMatchObject({ code: 0, stdout: '' });
    expect(loggedIn.stderr).toContain(`profile "ci" saved in ${config()}`);
    expect(loggedIn.stderr).not.toContain('given-token');
    expect((await stat(config())).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, 'config', 'rsd'))).mode & 0o777).toBe(0o700);
    expect(await readFile(config(), 'utf8')).toContain('[profiles.ci]');

    const listed = await rsd(['authorizations', 'list', '--org', 'org-a', '--profile', 'ci'], env);

    expect(listed.code).toBe(0);
    expect(product.received.at(-1)).toMatchObject({ path: '/v1/organizations/org-a/authorizations', authorization: 'Bearer given-token' });
  });

  test('when RSD_PROFILE names a profile, then it is used; a variable overrides its value; a profile named but absent exits 2', async () => {
    await login(['--profile', 'ci', '--token-stdin'], 'given-token');
    const selected = await rsd(['authorizations', 'list', '--org', 'org-a'], { ...env, RSD_PROFILE: 'ci' });
    expect(selected.code).toBe(0);

    // RSD_TOKEN overrides the profile's token: the deployment refuses it, and the CLI says the code and the request id.
    const overridden = await rsd(['authorizations', 'list', '--org', 'org-a'], { ...env, RSD_PROFILE: 'ci', RSD_TOKEN: 'other' });
    expect(overridden).toMatchObject({ code: 1, stdout: '' });
    expect(overridden.stderr).toBe('rsd: 401 INVALID_TOKEN: the token is not valid (request id req-test-1)\n');
    expect(product.received.at(-1)?.authorization).toBe('Bearer other');

    // RSD_CREDENTIALS_URL overrides the profile's URL: nothing answers there.
    const elsewhere = await rsd(['authorizations', 'list', '--org', 'org-a'], {
      ...env,
      RSD_PROFILE: 'ci',
      RSD_CREDENTIALS_URL: 'http://127.0.0.1:9',
    });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/^rsd: cannot reach the service: GET http:\/\/127\.0\.0\.1:9\//);

    const absent = await rsd(['authorizations', 'list', '--org', 'org-a', '--profile', 'nope'], env);
    expect(absent).toMatchObject({ code: 2, stdout: '' });
    expect(absent.stderr).toContain('no profile "nope"');
  });

  test('when profiles are listed, then no token or secret is shown; logout removes one', async () => {
    await login(['--token-stdin'], 'given-token');
    await loginClient('s3cret:+&\n', ['--profile', 'engine']);

    const listed = await rsd(['profiles', 'list', '--output', 'ndjson'], env);

    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toMatch(/given-token|s3cret/);
    expect(
      listed.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([
      expect.objectContaining({ name: 'default', selected: true, auth: 'token', clientId: null }),
      expect.objectContaining({ name: 'engine', selected: false, auth: 'client-credentials', clientId: 'engine' }),
    ]);

    expect(await rsd(['logout', '--profile', 'engine'], env)).toMatchObject({ code: 0 });
    expect(await readFile(config(), 'utf8')).not.toContain('engine');
    expect(await rsd(['logout', '--profile', 'engine'], env)).toMatchObject({ code: 2 });
  });

  test('when a profile has an OAuth client, then its token is fetched once by client credentials and sent as the bearer', async () => {
    const loggedIn = await loginClient('s3cret:+&\n', ['--audience', 'https://api.example']);
    expect(loggedIn.code).toBe(0);
    // The token fetched at login to prove the client is not kept: the file holds the client, not a token.
    expect(await readFile(config(), 'utf8')).not.toContain('fetched-');

    await writeFile(join(home, 'scores.json'), JSON.stringify([{ organizationId: 'org-a' }, { organizationId: 'org-a' }]));
    const published = await rsd(['scores', 'publish', join(home, 'scores.json')], env);

    expect(published).toMatchObject({ code: 0, stderr: '' });
    const tokenRequests = product.received.filter((request) => request.path === '/oauth/token');
    expect(tokenRequests).toHaveLength(2); // one at login, one for the command
    expect(tokenRequests.at(-1)).toMatchObject({
      method: 'POST',
      contentType: 'application/x-www-form-urlencoded',
      body: 'grant_type=client_credentials&audience=https%3A%2F%2Fapi.example',
    });
    expect(product.received.at(-1)).toMatchObject({ path: '/v1/scores', authorization: `Bearer fetched-${tokenRequests.length}` });
  });

  test('when the token URL refuses the client, then login fails (exit 1) naming the refusal, never the secret, and keeps nothing', async () => {
    const refused = await loginClient('wrong-secret');

    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /the token URL refused client engine: POST http:\/\/127\.0\.0\.1:\d+\/oauth\/token answered 401 invalid_client: bad client/,
    );
    expect(refused.stderr).not.toContain('wrong-secret');
    await expect(stat(config())).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test.each([[['--token-stdin', '--token-file', 'x']], [[]], [['--client-id', 'engine']], [['--token-stdin', '--audience', 'a']]])(
    'when login is given %j as its credential, then it is wrong usage (exit 2) and nothing is written',
    async (args) => {
      const result = await login(args, 'given-token');

      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^rsd: /);
      await expect(stat(config())).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );

  test('when the config file is not TOML, then a command that uses a profile exits 2 naming it, and login still works', async () => {
    await login(['--token-stdin'], 'given-token');
    await writeFile(config(), 'profiles = [');

    const broken = await rsd(['authorizations', 'list', '--org', 'org-a'], env);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(`${config()} is not valid TOML`);
    expect(await rsd(['completion', 'bash'], env)).toMatchObject({ code: 0 });
  });
});

describe('the client-credentials grant (RFC 6749 §4.4)', () => {
  test('when the token endpoint answers no access_token, then the fetch fails saying so', async () => {
    const send = () => Promise.resolve(new Response(JSON.stringify({ token_type: 'Bearer' }), { status: 200 }));

    await expect(fetchClientToken({ clientId: 'c', clientSecret: 's', tokenUrl: 'https://idp.example/token' }, send)).rejects.toThrow(
      'POST https://idp.example/token: the answer has no access_token',
    );
  });
});

describe('scores publish on a terminal, and the published CLI', () => {
  let product: Awaited<ReturnType<typeof deployment>>;
  let home: string;
  beforeEach(async () => {
    product = await deployment();
    home = await mkdtemp(join(tmpdir(), 'rsd-publish-'));
    await writeFile(join(home, 'scores.ndjson'), `${JSON.stringify({ organizationId: 'org-a' })}\n`.repeat(1500));
  });
  afterEach(async () => {
    await new Promise((done) => product.server.close(done));
    await rm(home, { recursive: true, force: true });
  });
  const publish = (terminal: boolean) =>
    rsd(['scores', 'publish', join(home, 'scores.ndjson')], { RSD_INGEST_URL: product.url, RSD_TOKEN: 'given-token' }, { terminal });

  test('when stderr is a terminal, then a progress bar ends its line at all the scores; otherwise stderr stays empty', async () => {
    const onTerminal = await publish(true);
    expect(onTerminal).toMatchObject({ code: 0, stdout: '{\n  "accepted": 1500\n}\n' });
    expect(onTerminal.stderr).toMatch(/\r\[#{30}\] 1500\/1500 scores 100%\n$/);

    expect(await publish(false)).toMatchObject({ code: 0, stderr: '' });
  });

  test("when the published CLI is asked for a product command, then it says where that is (exit 2); the workspace's has it", async () => {
    const refused = await rsd(['token'], {});
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toContain("unknown command 'token': a command of the product, not of this CLI (npx rsd token in a checkout");

    const workspace = await rsd(['signing-key', '--kid', 'k1'], {}, { edition: { productCommands: addProductCommands } });
    expect(workspace.code).toBe(0);
    expect(JSON.parse(workspace.stdout)).toEqual([expect.objectContaining({ kty: 'OKP', kid: 'k1' })]);

    // What the published CLI names as the product's is exactly what the workspace's adds.
    const io = { env: {}, stdout: () => undefined, stderr: () => undefined, untilStopped: () => Promise.resolve() };
    const names = (edition: CliEdition) => buildProgram(io, () => undefined, edition).commands.map((command) => command.name());
    const published = names({});
    expect(names({ productCommands: addProductCommands }).filter((name) => !published.includes(name))).toEqual([...PRODUCT_COMMANDS]);
  });
});
