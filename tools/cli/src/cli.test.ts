import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { ALERT_TYPES, RECIPIENT_WEBHOOK_EVENT_TYPES } from '@rsd/contracts';
import { addProductCommands } from './product-commands';
import { buildProgram, runCli, VERSION, type CliIo } from './cli';

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * Runs `rsd args` in the process, its HTTP through a fetch that records each request and gives the
 * next canned answer (so parsing is seen in what would have been sent), nothing else reached.
 */
async function rsd(args: string[], { env = {}, answers = [] }: { env?: Record<string, string>; answers?: Response[] } = {}) {
  let stdout = '';
  let stderr = '';
  const sent: Sent[] = [];
  const io: CliIo = {
    env,
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    untilStopped: () => Promise.resolve(),
    transport: {
      maxRetries: 0,
      fetch: (input, init) => {
        sent.push({
          method: init?.method ?? 'GET',
          url: input instanceof Request ? input.url : input.toString(),
          headers: Object.fromEntries(new Headers(init?.headers)),
          body: typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined,
        });
        const answer = answers.shift();
        return answer ? Promise.resolve(answer) : Promise.reject(new TypeError('fetch failed'));
      },
    },
  };
  const code = await runCli(args, io, { productCommands: addProductCommands });
  return { code, stdout, stderr, sent };
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** Every command's path below `rsd`, groups included: ['authorizations'], ['authorizations', 'create'], … */
function commandPaths(command: Command, above: string[] = []): string[][] {
  return command.commands.flatMap((sub) => [[...above, sub.name()], ...commandPaths(sub, [...above, sub.name()])]);
}

const everyCommand = commandPaths(
  buildProgram({ env: {}, stdout: () => undefined, stderr: () => undefined, untilStopped: () => Promise.resolve() }, () => undefined, {
    productCommands: addProductCommands,
  }),
);

describe('rsd --version and help', () => {
  test('when --version is given, then the CLI package’s version is printed and it exits 0', async () => {
    const packageVersion = (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;

    const result = await rsd(['--version']);

    expect(VERSION).toBe(packageVersion);
    expect(result).toMatchObject({ code: 0, stdout: `${packageVersion}\n`, stderr: '' });
  });

  test('when a command is asked for its help, then it prints that command’s options only', async () => {
    const result = await rsd(['authorizations', 'create', '--help']);

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: rsd authorizations create \[options\]/);
    for (const option of ['--org', '--recipient-type', '--scopes', '--key-delivery', '--claim-valid', '--credentials-url', '--token']) {
      expect(result.stdout).toContain(option);
    }
    // Other commands' options and the global overview are not in it.
    for (const other of ['--follow', '--events', '--api-key', '--verify', '--client-id', 'Exit codes', 'webhooks']) {
      expect(result.stdout).not.toContain(other);
    }
    expect(result.sent).toEqual([]);
  });

  test('when a group is asked for its help, then it lists the group’s commands and none of their options', async () => {
    const result = await rsd(['authorizations', '--help']);

    expect(result.code).toBe(0);
    const listed = [...result.stdout.matchAll(/^ {2}([a-z-]+) \[options\]/gm)].map((match) => match[1]);
    expect(listed).toEqual(['create', 'claim-link', 'rotate', 'list', 'access-log', 'get', 'revoke', 'erase']);
    expect(result.stdout).not.toContain('--recipient-type');
  });

  test('when a group is given alone, then its help is printed, not an unknown command', async () => {
    const alone = await rsd(['authorizations']);
    const asked = await rsd(['authorizations', '--help']);

    expect(alone).toMatchObject({ code: 0, stderr: '' });
    expect(alone.stdout).toBe(asked.stdout);
  });

  test('when rsd is given nothing, then the overview is printed: every command, the environment and the exit codes', async () => {
    const result = await rsd([]);

    expect(result.code).toBe(0);
    for (const command of ['authorizations', 'claim', 'scores', 'score', 'pillars', 'history', 'portfolio', 'webhooks', 'backup']) {
      expect(result.stdout).toMatch(new RegExp(`^ {2}${command} `, 'm'));
    }
    expect(result.stdout).toContain('RSD_API_KEY');
    expect(result.stdout).toContain('Exit codes: 0 success');
  });

  test.each(everyCommand.map((path) => [path.join(' ')]))(
    'when `rsd %s --help` is run, then it prints its own usage and exits 0',
    async (path) => {
      const result = await rsd([...path.split(' '), '--help']);

      expect(result.code).toBe(0);
      expect(result.stdout.split('\n')[0]).toMatch(new RegExp(`^Usage: rsd ${path} `));
      expect(result.sent).toEqual([]);
    },
  );
});

describe('rsd wrong usage (exit 2)', () => {
  test('when a subcommand is unknown, then it is named as an unknown subcommand of its group', async () => {
    const result = await rsd(['authorizations', 'x']);

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^rsd: unknown subcommand 'x' of 'authorizations' \(one of create, claim-link, rotate, /);
    expect(result.stdout).toBe('');
  });

  test('when a command is unknown, then it is named as an unknown command', async () => {
    const result = await rsd(['authorisations', 'list']);

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^rsd: unknown command 'authorisations'/);
  });

  test.each([
    [['authorizations', 'create', '--org', 'acme', '--scopes', 'qr_score'], /required option '--recipient-type <type>' not specified/],
    [['authorizations', 'list', '--org', 'acme', '--events', 'score.updated'], /unknown option '--events'/],
    [['score', '--client-id', 'rs_A', 'extra'], /too many arguments/],
    [
      ['authorizations', 'create', '--org', 'a', '--recipient-type', 'auditor', '--scopes', 'qr_score', '--key-delivery', 'post'],
      /Allowed choices are response, claim-link, account/,
    ],
    [
      ['authorizations', 'rotate', '--org', 'acme', '--client-id', 'rs_A', '--overlap', 'soon', '--token', 't'],
      /--overlap must be a whole number/,
    ],
    [['score', '--client-id', 'rs_A'], /no API key: set RSD_API_KEY/],
    [['webhooks', 'listen'], /required option '--port <n>' not specified/],
  ])('when rsd %j, then it says %s and sends nothing', async (args, message) => {
    const result = await rsd(args);

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.sent).toEqual([]);
  });
});

/** The command succeeded and printed `printed` as JSON, having sent exactly one request: `request`'s method and URL, with its headers among others. */
function expectPrintedAfterOne(
  result: Awaited<ReturnType<typeof rsd>>,
  printed: unknown,
  request: { method: string; url: string; headers: Record<string, string> },
): void {
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toEqual(printed);
  expect(result.sent).toEqual([
    expect.objectContaining({ method: request.method, url: request.url, headers: expect.objectContaining(request.headers) as unknown }),
  ]);
}

describe('rsd options and the environment', () => {
  const RECORD = { clientId: 'rs_A', status: 'active' };

  test("when a command's options come in any order, then they are read alike: URL, token and organization", async () => {
    for (const args of [
      ['authorizations', 'get', '--org', 'acme', '--client-id', 'rs_A', '--credentials-url', 'http://creds.test:1', '--token', 'jwt-1'],
      ['authorizations', 'get', '--token', 'jwt-1', '--credentials-url', 'http://creds.test:1', '--client-id', 'rs_A', '--org', 'acme'],
    ]) {
      const result = await rsd(args, { answers: [json(200, RECORD)] });

      expectPrintedAfterOne(result, RECORD, {
        method: 'GET',
        url: 'http://creds.test:1/v1/organizations/acme/authorizations/rs_A',
        headers: { authorization: 'Bearer jwt-1' },
      });
    }
  });

  test('when no option names them, then the URL and the token come from the environment', async () => {
    const result = await rsd(['authorizations', 'list', '--org', 'acme'], {
      env: { RSD_CREDENTIALS_URL: 'http://from-env.test:2', RSD_TOKEN: 'jwt-env' },
      answers: [json(200, { authorizations: [RECORD] })],
    });

    expect(JSON.parse(result.stdout)).toEqual({ authorizations: [RECORD] });
    expect(result.sent[0]).toMatchObject({ url: 'http://from-env.test:2/v1/organizations/acme/authorizations' });
    expect(result.sent[0]?.headers.authorization).toBe('Bearer jwt-env');
  });

  test('when the service refuses, then its status, code, message and every detail are on stderr and it exits 1', async () => {
    const refusal = {
      status: 400,
      code: 'VALIDATION_FAILED',
      message: 'The request body is invalid',
      details: [{ path: 'scopes.0', message: 'unknown scope', index: 0 }],
    };

    const result = await rsd(
      ['authorizations', 'create', '--org', 'acme', '--recipient-type', 'auditor', '--scopes', 'nope', '--token', 't'],
      { answers: [json(400, refusal)] },
    );

    expect(result.code).toBe(1);
    expect(result.stderr).toBe('rsd: 400 VALIDATION_FAILED: The request body is invalid\n  - [0] scopes.0: unknown scope\n');
    expect(result.sent[0]?.body).toEqual({ recipientType: 'auditor', scopes: ['nope'] });
  });

  test('when the service cannot be reached, then it says which request and exits 1', async () => {
    const result = await rsd(['score', '--client-id', 'rs_A', '--api-url', 'http://down.test:3'], { env: { RSD_API_KEY: 'rsk_x' } });

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^rsd: cannot reach the service: GET http:\/\/down\.test:3\/v1\/customers\/rs_A\/score: .+Is it running/);
  });

  test('when a rotation is answered 202, then the record is printed, the warning said, and it exits 3', async () => {
    const pending = { clientId: 'rs_A', apiKey: 'rsk_new', enforcement: 'pending' };

    const result = await rsd(['authorizations', 'rotate', '--org', 'acme', '--client-id', 'rs_A', '--overlap', '1h', '--token', 't'], {
      answers: [json(202, pending)],
    });

    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toEqual(pending);
    expect(result.stderr).toContain('the rotation is recorded but NOT yet in effect');
    expect(result.sent[0]?.body).toEqual({ overlapSeconds: 3600 });
  });
});

describe('rsd webhook events', () => {
  test("when each owner's webhook creation is asked for its help, then it names every event of the notifier's list for that owner", async () => {
    const recipient = await rsd(['webhooks', 'create', '--help']);
    const organization = await rsd(['alert-webhooks', 'create', '--help']);

    for (const event of RECIPIENT_WEBHOOK_EVENT_TYPES) expect(recipient.stdout).toContain(event);
    for (const event of ALERT_TYPES) expect(organization.stdout).toContain(event);
    for (const event of ALERT_TYPES) expect(recipient.stdout).not.toContain(event);
  });

  test('when alert-webhooks create is asked for its help, then it takes an organization and no score conditions', async () => {
    const result = await rsd(['alert-webhooks', 'create', '--help']);

    expect(result.stdout).toContain('--org <id>');
    expect(result.stdout).toContain('authorization.key_leaked');
    expect(result.stdout).not.toContain('--score-below');
    expect(result.stdout).not.toContain('--client-id');
  });
});

describe('rsd portfolio offers and auto-accept', () => {
  const asAccount = { env: { RSD_API_KEY: 'rsa_x', RSD_CREDENTIALS_URL: 'http://creds.test:1' } };
  const CUSTOMER = { clientId: 'rs_A', organizationId: 'acme', recipientType: 'auditor', scopes: ['qr_score'], expiresAt: null };

  test('when offers are listed, then one page comes from the credentials service with the account key', async () => {
    const page = {
      items: [{ ...CUSTOMER, recipientName: null, allowedCidrs: null, offeredAt: '2026-11-20T10:00:00.000Z' }],
      nextCursor: null,
    };

    const result = await rsd(['portfolio', 'offers', 'list', '--limit', '2'], { ...asAccount, answers: [json(200, page)] });

    expectPrintedAfterOne(result, page, {
      method: 'GET',
      url: 'http://creds.test:1/v1/portfolio/offers?limit=2',
      headers: { 'x-api-key': 'rsa_x' },
    });
  });

  test('when an offer is accepted, then the grant is printed; when one is declined, then what happened is said on stderr', async () => {
    const accepted = await rsd(['portfolio', 'offers', 'accept', '--client-id', 'rs_A'], { ...asAccount, answers: [json(200, CUSTOMER)] });
    const declined = await rsd(['portfolio', 'offers', 'decline', '--client-id', 'rs_B'], {
      ...asAccount,
      answers: [new Response(null, { status: 204 })],
    });

    expect(accepted).toMatchObject({ code: 0 });
    expect(JSON.parse(accepted.stdout)).toEqual(CUSTOMER);
    expect(accepted.sent[0]).toMatchObject({ method: 'POST', url: 'http://creds.test:1/v1/portfolio/offers/rs_A/accept' });
    expect(declined).toMatchObject({ code: 0, stdout: '' });
    expect(declined.stderr).toContain('rs_B declined');
    expect(declined.sent[0]).toMatchObject({ method: 'POST', url: 'http://creds.test:1/v1/portfolio/offers/rs_B/decline' });
  });

  test('when an offer is no longer pending, then the refusal and its code are on stderr and it exits 1', async () => {
    const refusal = { code: 'OFFER_NOT_PENDING', message: 'This offer has ended (revoked, declined or expired); nothing was accepted' };

    const result = await rsd(['portfolio', 'offers', 'accept', '--client-id', 'rs_A'], { ...asAccount, answers: [json(409, refusal)] });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('409 OFFER_NOT_PENDING');
  });

  test('when auto-accept is given organizations or none, then it replaces the list; without either it reads it; both are wrong usage', async () => {
    const set = await rsd(['portfolio', 'auto-accept', '--organizations', 'acme, globex'], {
      ...asAccount,
      answers: [json(200, { organizationIds: ['acme', 'globex'] })],
    });
    const cleared = await rsd(['portfolio', 'auto-accept', '--none'], { ...asAccount, answers: [json(200, { organizationIds: [] })] });
    const read = await rsd(['portfolio', 'auto-accept'], { ...asAccount, answers: [json(200, { organizationIds: [] })] });
    const both = await rsd(['portfolio', 'auto-accept', '--organizations', 'acme', '--none'], asAccount);

    expect(set.sent[0]).toMatchObject({
      method: 'PUT',
      url: 'http://creds.test:1/v1/portfolio/auto-accept',
      body: { organizationIds: ['acme', 'globex'] },
    });
    expect(JSON.parse(set.stdout)).toEqual({ organizationIds: ['acme', 'globex'] });
    expect(cleared.sent[0]).toMatchObject({ method: 'PUT', body: { organizationIds: [] } });
    expect(read.sent[0]).toMatchObject({ method: 'GET', url: 'http://creds.test:1/v1/portfolio/auto-accept' });
    expect(both).toMatchObject({ code: 2, sent: [] });
    expect(both.stderr).toContain('--organizations and --none exclude each other');
  });
});
