import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ACCESS_REVIEW_REPORT_JWS_TYPE,
  CERTIFICATE_JWS_TYPE,
  verifyCertificate,
  verifySignedJws,
  type VerifiedJws,
  type CreateAuthorization,
  type Jwks,
  type Organization,
  type ScoreSubmission,
  type TransportOptions,
  type Webhooks,
} from '@resilience-score/client';
import { ALERT_TYPES, RECIPIENT_WEBHOOK_EVENT_TYPES } from '@rsd/contracts/event-names';
import { Argument, Command, CommanderError, Option } from 'commander';
import { addAccessReviewCommands } from './access-reviews';
import { completionScript, SHELLS, type Shell } from './completion';
import { ACCOUNT_EXPORTS, claimLinkExportsOf, CREDENTIAL_EXPORTS, exportsOf, WEBHOOK_EXPORTS } from './env-output';
import { addErasureCommands, addOrganizationCommands } from './organizations';
import { runPortfolioCommand } from './portfolio';
import { addProfileCommands, clientTokenSource, selectProfile, type SelectedProfile } from './login';
import { formatRows, formatted, listOutput, type Column } from './output';
import { DEFAULT_ORIGINS, describeFailure, jsonOf, Product, type Answer, type Origins } from './product';
import { counted, ProgressBar } from './progress';
import { verifyResponseSignature } from './response-signature';
import { readScoreFile, UsageError } from './score-file';

// @rsd/platform, @rsd/contracts and the webhook commands (which need both) are loaded by the commands
// that use them: each is a large part of a start, and most commands need neither.

/** What the CLI reads and writes outside itself: the process's, or a test's. */
export interface CliIo {
  env: Record<string, string | undefined>;
  /** Text for stdout and stderr, as given (with its line ends). */
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Resolves when a command that runs until stopped (`webhooks listen`) should stop. */
  untilStopped: () => Promise<unknown>;
  /** The SDK's transport options (a test's fetch, a shorter timeout); the SDK's defaults otherwise. */
  transport?: TransportOptions;
  /** All of stdin, for `rsd login --token-stdin`; the process's otherwise. */
  stdin?: () => Promise<string>;
  /** Whether stderr is a terminal: `scores publish` draws its progress bar there only then. */
  stderrIsTerminal?: boolean;
}

/** What makes the workspace's `rsd` more than the published one: the product's own commands (product-commands.ts). */
export interface CliEdition {
  productCommands?: (program: Command, builders: Builders) => void;
}

/**
 * The product's own commands (decision 57): in the workspace's `rsd`, not in the published CLI, whose error for one
 * says where it is.
 */
export const PRODUCT_COMMANDS = ['signing-key', 'token', 'backup', 'restore', 'subject-keys', 'seal-log'] as const;

/** The CLI's version: its package's. */
export const VERSION = (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;

const RECIPIENT_TYPES = 'insurance_provider, auditor, regulatory_body, partner';
const SCOPES = 'qr_score, score_trend, pillar_breakdown';

const FOOTER = `
Environment (each also an option of the commands that use it):
  RSD_API_URL          read API             (--api-url, default ${DEFAULT_ORIGINS.api})
  RSD_CREDENTIALS_URL  credentials service  (--credentials-url, default ${DEFAULT_ORIGINS.credentials})
  RSD_INGEST_URL       score ingest         (--ingest-url, default ${DEFAULT_ORIGINS.ingest})
  RSD_NOTIFIER_URL     notifier (webhooks)  (--notifier-url, default ${DEFAULT_ORIGINS.notifier})
  RSD_TOKEN            bearer token         (--token; otherwise one is minted from JWT_HS256_SECRET or the
                                            embedded runtime's secret in DATA_DIR, default .data)
  RSD_API_KEY          API key, or a recipient account key for rsd portfolio (--api-key; prefer the
                                            variable: arguments show in ps)
  RSD_WEBHOOK_SECRET   webhook secret, for webhooks listen (--secret; prefer the variable)
  RSD_PROFILE          the profile of $XDG_CONFIG_HOME/rsd/config.toml to use (--profile; default "default"):
                       its URLs and token, each overridden by the variables above (rsd login makes one)

Recipient types: ${RECIPIENT_TYPES}
Scopes: ${SCOPES}

Lists print JSON, or with --output table, csv or ndjson their rows. Errors name the service's code and request id.

Exit codes: 0 success, 1 the service refused or could not be reached, 2 wrong usage,
            3 a revoke or rotation recorded but not yet in effect (the event log could not take it yet).

rsd COMMAND --help shows a command's options; rsd GROUP --help the group's commands.
`;

/** Options every command that reaches a service takes, made fresh for each command. */
const connection = {
  api: () => new Option('--api-url <url>', `read API (RSD_API_URL, default ${DEFAULT_ORIGINS.api})`),
  credentials: () =>
    new Option('--credentials-url <url>', `credentials service (RSD_CREDENTIALS_URL, default ${DEFAULT_ORIGINS.credentials})`),
  ingest: () => new Option('--ingest-url <url>', `score ingest (RSD_INGEST_URL, default ${DEFAULT_ORIGINS.ingest})`),
  notifier: () => new Option('--notifier-url <url>', `notifier (RSD_NOTIFIER_URL, default ${DEFAULT_ORIGINS.notifier})`),
  token: () =>
    new Option(
      '--token <jwt>',
      'bearer token (RSD_TOKEN; otherwise one is minted from JWT_HS256_SECRET or the secret in DATA_DIR, development only)',
    ),
  apiKey: (what = 'the API key') => new Option('--api-key <key>', `${what} (RSD_API_KEY; prefer the variable: arguments show in ps)`),
};

type Options = Record<string, unknown>;

/** A command's options by their names on the command line (`clientId` as `client-id`), as the modules that read them name them. */
export function kebab(options: Options): Record<string, string | boolean | undefined> {
  return Object.fromEntries(
    Object.entries(options).map(([name, value]) => [name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), value as string | boolean]),
  );
}

/**
 * Builds the `rsd` program: every command with its own options and help. `print` receives what a
 * command's action returns (undefined: nothing to print).
 */
export function buildProgram(io: CliIo, print: (result: unknown) => void, edition: CliEdition = {}): Command {
  const program = new Command('rsd');
  /** The profile selected (--profile, RSD_PROFILE, or `default`), read before each command runs. */
  let selected: () => SelectedProfile = () => ({ name: 'default', named: false, profile: undefined });
  /** A client-credentials profile's token source, made once so that its token is fetched once. */
  let profileToken: (() => Promise<string>) | undefined;
  program.hook('preAction', async () => {
    selected = await selectProfile(io.env, program.opts<{ profile?: string }>().profile);
  });
  /** Each origin and credential: the option, else the environment, else the profile, else the default. */
  const productFor = (options: Options): Product => {
    const { profile } = selected();
    const pick = (option: string, variable: string, kept: string | undefined, fallback: string) =>
      (options[option] as string | undefined) ?? (io.env[variable] || undefined) ?? kept ?? fallback;
    const origins: Origins = {
      api: pick('apiUrl', 'RSD_API_URL', profile?.apiUrl, DEFAULT_ORIGINS.api),
      credentials: pick('credentialsUrl', 'RSD_CREDENTIALS_URL', profile?.credentialsUrl, DEFAULT_ORIGINS.credentials),
      ingest: pick('ingestUrl', 'RSD_INGEST_URL', profile?.ingestUrl, DEFAULT_ORIGINS.ingest),
      notifier: pick('notifierUrl', 'RSD_NOTIFIER_URL', profile?.notifierUrl, DEFAULT_ORIGINS.notifier),
    };
    const auth = profile?.auth;
    if (auth && !('token' in auth)) profileToken ??= clientTokenSource(auth, io.transport?.fetch);
    return new Product({
      origins,
      token: (options.token as string | undefined) ?? (io.env.RSD_TOKEN || undefined),
      profileToken: auth && 'token' in auth ? () => Promise.resolve(auth.token) : profileToken,
      apiKey: (options.apiKey as string | undefined) ?? (io.env.RSD_API_KEY || undefined),
      env: io.env,
      // Decision 54: the audit trail records a change made with the CLI as made through it.
      transport: { userAgent: CLI_AGENT, ...io.transport },
    });
  };
  const note = (line: string) => io.stderr(`${line}\n`);
  /** An action that prints what it returns, as its command's --output asks when it is a list. */
  const act =
    (action: (options: Options, ...args: string[]) => Promise<unknown>) =>
    async (...args: unknown[]): Promise<void> => {
      const command = args.at(-1) as Command;
      const positional = args.slice(0, -2) as string[];
      print(formatted(command, await action(command.opts(), ...positional), note));
    };
  const stdin = io.stdin ?? readStdin;

  program
    .description('command-line client for the Resilience Score Data API')
    .usage('<command> [options]')
    .version(VERSION, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .addHelpText('after', FOOTER)
    .configureOutput({
      writeOut: io.stdout,
      writeErr: io.stderr,
      outputError: (message, write) => write(`rsd: ${message.replace(/^error: /, '')}`),
    })
    .configureHelp({ subcommandTerm: commandTerm, sortOptions: true })
    .exitOverride()
    .showSuggestionAfterError()
    .option('--profile <name>', 'the profile of the config file to use (RSD_PROFILE; default "default")');
  actAsGroup(program, edition.productCommands ? undefined : PRODUCT_COMMANDS);

  addAuthorizations(program, { io, productFor, act, note });
  addAuditLog(program, { io, productFor, act, note });
  addAccessReviewCommands(group(program, 'access-reviews', "An organization's reviews of its grants"), { io, productFor, act });

  program
    .command('claim')
    .summary('A recipient claims its key by a claim link (or into a portfolio)')
    .description(
      'A recipient claims its key by the link: prints clientId and apiKey, shown only this once. With --into-portfolio the grant ' +
        'goes into the recipient account whose key (rsa_…) is in RSD_API_KEY, or without one into a new account whose key is shown ' +
        'only this once.',
    )
    .argument('<url>', 'the claim link')
    .option('--into-portfolio', 'into a recipient account (a portfolio) instead of a key of its own')
    .option('--account-name <name>', "the new account's name (with --into-portfolio)")
    .option('--env', 'print export lines for eval: CLIENT_ID, RSD_API_KEY (and RSD_ACCOUNT_ID with --into-portfolio)')
    .addOption(connection.apiKey('the account key to join with --into-portfolio'))
    .action(act((options, link) => claimByLink(productFor(options), options, link, note)));

  const scores = group(program, 'scores', 'What a scoring engine publishes (score ingest)');
  scores
    .command('publish')
    .description('Publishes the scores in FILE, in batches of up to 1,000')
    .argument('<file>', 'JSON: a score, an array or {"scores":[…]}; or NDJSON, one score a line')
    .addOption(connection.ingest())
    .addOption(connection.token())
    .action(
      act(async (options, file) => {
        const items = await readScoreFile(file);
        const notObject = items.findIndex((item) => typeof item !== 'object' || item === null || Array.isArray(item));
        if (notObject >= 0) throw new UsageError(`${file}: score ${notObject + 1} is not a JSON object`);
        const publisher = await productFor(options).publisher();
        // Decision 57: a progress bar on a terminal only, so that a CI log or a redirected stderr stays clean.
        if (!io.stderrIsTerminal) return { accepted: (await publisher.publishScores(items as ScoreSubmission[])).accepted };
        const bar = new ProgressBar(items.length, io.stderr);
        try {
          return { accepted: (await publisher.publishScores(counted(items as ScoreSubmission[], bar))).accepted };
        } finally {
          bar.end();
        }
      }),
    );

  addReads(program, { io, productFor, act, note });
  addCertificates(program, { io, productFor, act, note });
  addVerify(program, { io, productFor, act, note });
  addPortfolio(program, { io, productFor, act, note });
  addWebhooks(program, { io, productFor, act, note });
  addProfileCommands(program, group(program, 'profiles', 'The profiles rsd login kept, without their secrets'), {
    env: io.env,
    profileName: () => program.opts<{ profile?: string }>().profile ?? (io.env.RSD_PROFILE || 'default'),
    stdin,
    fetch: io.transport?.fetch,
    act,
    note,
  });
  addOrganizationCommands(group(program, 'organizations', 'An organization itself: its offboarding (decision 56)'), {
    productFor,
    act,
    note,
  });
  addErasureCommands(program, { productFor, act, note });

  program
    .command('completion')
    .description(
      'Prints the completion script for a shell: source <(rsd completion bash); rsd completion fish > ~/.config/fish/completions/rsd.fish',
    )
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(SHELLS))
    .action(act((_options, shell) => Promise.resolve(completionScript(program, shell as Shell).trimEnd())));

  edition.productCommands?.(program, { io, productFor, act, note });

  return program;
}

export interface Builders {
  io: CliIo;
  productFor: (options: Options) => Product;
  act: (action: (options: Options, ...args: string[]) => Promise<unknown>) => (...args: unknown[]) => Promise<void>;
  note: (line: string) => void;
}

/**
 * A command that only holds others: alone it shows its help (as `rsd` alone does), and a word after it
 * that is none of its commands is named as an unknown subcommand of it; one of `elsewhere` (the product's
 * commands, in the published CLI) is told where it is.
 */
function actAsGroup(command: Command, elsewhere: readonly string[] = []): Command {
  return command.argument('[command...]').action(([name]: string[], _options: unknown, self: Command) => {
    if (name === undefined) {
      self.outputHelp();
      return;
    }
    const known = self.commands.map((sub) => sub.name());
    const within = self.parent ? ` of '${self.name()}'` : '';
    const hint = elsewhere.includes(name)
      ? `: a command of the product, not of this CLI (npx rsd ${name} in a checkout of the product)`
      : known.length > 0
        ? ` (one of ${known.join(', ')})`
        : '';
    self.error(`unknown ${self.parent ? 'subcommand' : 'command'} '${name}'${within}${hint}`, {
      exitCode: 2,
      code: 'commander.unknownCommand',
    });
  });
}

/** How a command is listed in its parent's help: a group as `name <command>`, any other with its options and arguments. */
function commandTerm(command: Command): string {
  if (command.commands.length > 0) return `${command.name()} <command>`;
  const args = command.registeredArguments.map((argument) => (argument.required ? `<${argument.name()}>` : `[${argument.name()}]`));
  return [command.name(), ...(command.options.length > 0 ? ['[options]'] : []), ...args].join(' ');
}

export function group(program: Command, name: string, description: string): Command {
  return actAsGroup(program.command(name).description(description).usage('<command> [options]'));
}

/** The CLI's product token, before the SDK's in the User-Agent of everything it sends. */
export const CLI_AGENT = `rsd-cli/${VERSION}`;

/**
 * Decision 54: `rsd audit-log`, the organization's audit trail with its filters: every matching entry as
 * JSON (the SDK's iterator over the pages), or the service's CSV or NDJSON export as it comes.
 */
function addAuditLog(program: Command, { io, productFor, act }: Builders): void {
  program
    .command('audit-log')
    .summary("Who changed an organization's grants: its audit trail")
    .description("The organization's audit trail, newest first: each change with its actor, request id and address")
    .addOption(new Option('--org <id>', 'the organization').makeOptionMandatory())
    .addOption(connection.credentials())
    .addOption(connection.token())
    .option('--from <instant>', 'entries at or after this ISO 8601 instant')
    .option('--to <instant>', 'entries before this ISO 8601 instant')
    .option('--actor <id-or-type>', "an actor's id (<issuer>|<subject>, a Client ID, an account id) or type (person, service, …)")
    .option('--action <action>', 'one action, such as authorization.revoked')
    .option('--client-id <id>', "one grant's entries")
    .option('--limit <n>', 'entries per page read (1 to 500); every page is read')
    .addOption(
      new Option('--output <format>', "how to print: JSON, a table, or the service's CSV or NDJSON export")
        .choices(['json', 'table', 'csv', 'ndjson'])
        .default('json'),
    )
    .action(
      act(async (options) => {
        const product = productFor(options);
        const org = options.org as string;
        const filters = {
          ...(options.from === undefined ? {} : { from: options.from as string }),
          ...(options.to === undefined ? {} : { to: options.to as string }),
          ...(options.actor === undefined ? {} : { actor: options.actor as string }),
          ...(options.action === undefined ? {} : { action: options.action as string }),
          ...(options.clientId === undefined ? {} : { clientId: options.clientId as string }),
        };
        if (options.output === 'json' || options.output === 'table') {
          const limit = options.limit === undefined ? undefined : Number(options.limit);
          const items = [];
          for await (const entry of (await product.organization(org)).auditLog({ ...filters, ...(limit === undefined ? {} : { limit }) })) {
            items.push(entry);
          }
          return options.output === 'table' ? formatRows(items as unknown as Record<string, unknown>[], 'table') : { items };
        }
        const query = new URLSearchParams(filters);
        const url = `${product.origins.credentials}/v1/organizations/${encodeURIComponent(org)}/audit-log`;
        const answer = await product.send({
          url: query.size > 0 ? `${url}?${query.toString()}` : url,
          headers: {
            authorization: `Bearer ${await product.token('authorizations:write', org)}`,
            accept: options.output === 'csv' ? 'text/csv' : 'application/x-ndjson',
          },
        });
        io.stdout(new TextDecoder().decode(answer.body));
        return undefined;
      }),
    );
}

function addAuthorizations(program: Command, { io, productFor, act }: Builders): void {
  const authorizations = group(program, 'authorizations', "An organization's grants of its score (credentials service)");
  const org = () => new Option('--org <id>', 'the organization').makeOptionMandatory();
  const clientId = () => new Option('--client-id <id>', "the grant's Client ID").makeOptionMandatory();
  const organization = (options: Options): Promise<Organization> => productFor(options).organization(options.org as string);
  const admin = (command: Command) => command.addOption(org()).addOption(connection.credentials()).addOption(connection.token());

  admin(authorizations.command('create'))
    .summary('Grants a recipient access: prints its key, shown only this once (or a claim link)')
    .description(
      'Grants a recipient access: prints the record with its key, shown only this once (or, with --key-delivery claim-link, a ' +
        "one-time link the recipient claims the key by; with --key-delivery account, straight into a recipient's portfolio)",
    )
    .requiredOption('--recipient-type <type>', RECIPIENT_TYPES)
    .requiredOption('--scopes <list>', `comma-separated: ${SCOPES}`)
    .option('--recipient-name <name>', 'who the recipient is, as the organization names it')
    .option('--expires-at <date>', 'YYYY-MM-DD (valid through that UTC day) or an ISO date-time')
    .option('--allowed-cidrs <list>', 'comma-separated addresses or ranges reads are allowed from (203.0.113.0/24,2001:db8::/32)')
    .addOption(new Option('--key-delivery <how>', 'how the key reaches the recipient').choices(['response', 'claim-link', 'account']))
    .option('--claim-valid <duration>', 'with claim-link: how long the link works, 1h to 7d (default 72h)')
    .option('--account-id <rcp_…>', 'with account: the recipient account that holds the grant')
    .option('--env', 'print export lines for eval: CLIENT_ID and RSD_API_KEY (CLIENT_ID and RSD_CLAIM_URL for a claim link)')
    .action(
      act(async (options) => {
        const request = {
          recipientType: options.recipientType as string,
          scopes: listOf(options.scopes as string),
          ...(options.recipientName ? { recipientName: options.recipientName as string } : {}),
          ...(options.expiresAt ? { expiresAt: options.expiresAt as string } : {}),
          ...(options.allowedCidrs ? { allowedCidrs: listOf(options.allowedCidrs as string) } : {}),
          ...keyDeliveryOf(
            options.keyDelivery as string | undefined,
            options.claimValid as string | undefined,
            options.accountId as string | undefined,
          ),
        } as CreateAuthorization;
        const created: object = await (await organization(options)).authorizations.create(request);
        if (!options.env) return created;
        return 'claim' in created ? claimLinkExportsOf(created) : exportsOf(created, CREDENTIAL_EXPORTS);
      }),
    );

  admin(authorizations.command('claim-link'))
    .description('A new link for a key not yet claimed; the previous link stops working')
    .addOption(clientId())
    .option('--claim-valid <duration>', 'how long the link works, 1h to 7d (default 72h)')
    .option('--env', 'print export lines for eval: CLIENT_ID and RSD_CLAIM_URL')
    .action(
      act(async (options) => {
        const valid = options.claimValid as string | undefined;
        const request = valid === undefined ? {} : { claimValidSeconds: secondsOf(valid, '--claim-valid') };
        const issued = await (await organization(options)).authorizations.claimLink(options.clientId as string, request);
        return options.env ? claimLinkExportsOf(issued) : issued;
      }),
    );

  admin(authorizations.command('rotate'))
    .description('A new key, shown only this once; the previous key works for the overlap')
    .addOption(clientId())
    .option('--overlap <duration>', 'how long the previous key still works: 0, 90s, 30m, 1h, 7d (default 1 day, at most 7 days)')
    .option('--env', 'print export lines for eval: CLIENT_ID and RSD_API_KEY')
    .action(
      act(async (options) => {
        const overlap = options.overlap as string | undefined;
        const request = overlap === undefined ? {} : { overlapSeconds: secondsOf(overlap) };
        const rotated = await (await organization(options)).authorizations.rotate(options.clientId as string, request);
        if (isPending(rotated)) throw new PendingEnforcement(rotated, 'rotation');
        return options.env ? exportsOf(rotated, CREDENTIAL_EXPORTS) : rotated;
      }),
    );

  listOutput(admin(authorizations.command('list')).description('Every grant, newest first, with lastUsedAt and reads in 24 h / 30 days'), {
    columns: AUTHORIZATION_COLUMNS,
    tableAlias: true,
  }).action(act(async (options) => ({ authorizations: await (await organization(options)).authorizations.list() })));

  listOutput(admin(authorizations.command('access-log')))
    .description('Who read through a grant, newest first: a page of entries, or with --follow every new entry as it comes')
    .addOption(clientId())
    .option('--limit <n>', 'entries in the page (1 to 500; with --follow, the latest shown first, default 10)')
    .option('--cursor <cursor>', 'the page after the one whose nextCursor this is')
    .option('--from <instant>', 'entries at or after this ISO 8601 instant')
    .option('--to <instant>', 'entries before this ISO 8601 instant')
    .option('--status <status>', 'one status (404) or a class of them (4xx)')
    .option('--address <address>', 'the client address exactly as the entries show it')
    .option('--resource <resource>', 'one resource read (score, pillars, history, claim, certificate)')
    .option('--follow', 'print new entries, one JSON line each, as they come, until Ctrl-C')
    .action(
      act(async (options) => {
        const product = productFor(options);
        const org = options.org as string;
        const client = options.clientId as string;
        const filters = ['from', 'to', 'status', 'address', 'resource'] as const;
        if (options.follow) {
          const given = ['cursor', ...filters].filter((name) => options[name] !== undefined);
          if (given.length > 0) throw new UsageError(`--follow does not go with --${given.join(', --')}`);
          return followAccessLog(product, org, client, (options.limit as string | undefined) ?? '10', io.stdout);
        }
        const query = new URLSearchParams();
        for (const name of ['limit', 'cursor', ...filters]) {
          if (options[name] !== undefined) query.set(name, options[name] as string);
        }
        const url = `${authorizationsUrl(product, org)}/${encodeURIComponent(client)}/access-log`;
        const token = await product.token('authorizations:write', org);
        const answer = await product.sendJson({
          url: query.size > 0 ? `${url}?${query.toString()}` : url,
          headers: { authorization: `Bearer ${token}` },
        });
        return answer.body;
      }),
    );

  admin(authorizations.command('get'))
    .description("One grant's record")
    .addOption(clientId())
    .action(act(async (options) => (await organization(options)).authorizations.get(options.clientId as string)));

  admin(authorizations.command('revoke'))
    .description('Ends a grant: its key stops working')
    .addOption(clientId())
    .action(
      act(async (options) => {
        const revoked = await (await organization(options)).authorizations.revoke(options.clientId as string);
        if (isPending(revoked)) throw new PendingEnforcement(revoked, 'revocation');
        return revoked;
      }),
    );
}

function authorizationsUrl(product: Product, org: string): string {
  return `${product.origins.credentials}/v1/organizations/${encodeURIComponent(org)}/authorizations`;
}

function addReads(program: Command, { productFor, act, note }: Builders): void {
  const read = (name: string, description: string) =>
    program
      .command(name)
      .description(description)
      .requiredOption('--client-id <id>', "the grant's Client ID")
      .option(
        '--verify',
        "check the response's signature (RFC 9421, Ed25519) against the read API's published keys (/.well-known/jwks.json) and " +
          'say so on stderr; a response that does not verify exits 1',
      )
      .addOption(connection.api())
      .addOption(connection.apiKey('the API key, or a recipient account key that holds the grant'));

  read('score', 'The latest score and grade (scope qr_score)').action(
    act(async (options) => {
      const client = productFor(options).client(options.clientId as string);
      const served = await client.score();
      if (options.verify) await verified(served.evidence, () => client.signingKeys(), note);
      return jsonOf(served.evidence.body);
    }),
  );

  read('pillars', 'The four-pillar breakdown of the latest score (scope pillar_breakdown)').action(
    act(async (options) => {
      const client = productFor(options).client(options.clientId as string);
      const served = await client.pillars();
      if (options.verify) await verified(served.evidence, () => client.signingKeys(), note);
      return jsonOf(served.evidence.body);
    }),
  );

  read('history', "A page of the score's history, newest first; each item says what changed (scope score_trend)")
    .option('--from <date>', 'the oldest scoreDate, YYYY-MM-DD')
    .option('--to <date>', 'the newest scoreDate, YYYY-MM-DD')
    .option('--limit <n>', 'dates in the page (1 to 366)')
    .option('--cursor <cursor>', 'the page after the one whose nextCursor this is')
    .action(
      act(async (options) => {
        const product = productFor(options);
        const client = product.client(options.clientId as string);
        const query = new URLSearchParams();
        for (const name of ['from', 'to', 'limit', 'cursor']) {
          const value = options[name] as string | undefined;
          if (value !== undefined) query.set(name, value);
        }
        const url = `${product.origins.api}/v1/customers/${encodeURIComponent(options.clientId as string)}/score/history`;
        const answer = await product.send({
          url: query.size > 0 ? `${url}?${query.toString()}` : url,
          headers: { 'x-api-key': product.apiKey() },
        });
        if (options.verify) await verified(evidenceOf(answer), () => client.signingKeys(), note);
        return jsonOf(answer.body);
      }),
    );
}

/**
 * Decision 55: `rsd certificate get` fetches a grant's certificate (JSON with its JWS, or the PDF),
 * `rsd certificate keys` saves the published key set, and `rsd certificate verify` checks a saved
 * JWS against a saved key set with no network at all.
 */
function addCertificates(program: Command, { productFor, act, note }: Builders): void {
  const certificates = group(program, 'certificate', "A grant's signed score certificate, and its offline verification");
  certificates
    .command('get')
    .description("The grant's certificate on --as-of (default today, UTC): {certificate, jws}, or with --pdf the one-page PDF into FILE")
    .requiredOption('--client-id <id>', "the grant's Client ID")
    .option('--as-of <date>', 'the date the certificate speaks for, YYYY-MM-DD (not after today)')
    .option('--pdf <file>', 'write the PDF into FILE (refused if it exists) instead of printing the JSON')
    .option('--verify', "check the response's signature and the certificate's JWS against the read API's published keys; exits 1 if not")
    .addOption(connection.api())
    .addOption(connection.apiKey('the API key, or a recipient account key that holds the grant'))
    .action(
      act(async (options) => {
        const product = productFor(options);
        const client = product.client(options.clientId as string);
        const asOf = options.asOf as string | undefined;
        const pdfFile = options.pdf as string | undefined;
        if (pdfFile !== undefined) {
          const query = asOf === undefined ? '' : `?asOf=${encodeURIComponent(asOf)}`;
          const answer = await product.send({
            url: `${product.origins.api}/v1/customers/${encodeURIComponent(options.clientId as string)}/certificate${query}`,
            headers: { 'x-api-key': product.apiKey(), accept: 'application/pdf' },
          });
          if (answer.status !== 200) throw new Error(refusalOf(answer));
          if (options.verify) await verified(evidenceOf(answer), () => client.signingKeys(), note);
          const { writeFile } = await import('node:fs/promises');
          await writeFile(pdfFile, answer.body, { flag: 'wx' });
          note(`rsd: certificate written to ${pdfFile} (${answer.body.length} bytes)`);
          return undefined;
        }
        const served = await client.certificate(asOf);
        if (options.verify) {
          await verified(served.evidence, () => client.signingKeys(), note);
          const { kid } = verifyCertificate(served.jws, await client.signingKeys());
          note(`rsd: certificate JWS verified (key ${kid})`);
        }
        return jsonOf(served.evidence.body);
      }),
    );

  certificates
    .command('keys')
    .description("The read API's published key set (/.well-known/jwks.json): save it to verify certificates offline later")
    .addOption(connection.api())
    .action(
      act(async (options) => {
        const product = productFor(options);
        const answer = await product.send({ url: `${product.origins.api}/.well-known/jwks.json` });
        if (answer.status !== 200) throw new Error(refusalOf(answer));
        return jsonOf(answer.body);
      }),
    );

  certificates
    .command('verify')
    .description(
      'Checks a certificate offline against a saved key set: FILE holds the JWS, or the {certificate, jws} JSON (- for stdin); ' +
        'prints the certificate the JWS says; exits 1 if it does not verify',
    )
    .argument('<file>', 'the JWS or the certificate JSON; - reads stdin')
    .requiredOption('--keys <file>', 'the saved key set (rsd certificate keys, or /.well-known/jwks.json as served)')
    .action(
      act(async (options, file) => {
        const keySet = await savedKeySet(options.keys as string);
        return (await verifiedFile(file, keySet, [CERTIFICATE_JWS_TYPE], note)).payload;
      }),
    );
}

/**
 * Decision 54 (and 55): `rsd verify FILE` checks anything the service signs with its response-signing
 * keys (an access review's report, a certificate) against the read API's published keys, or offline
 * against a saved key set (`--keys`); prints what the JWS says; exits 1 if it does not verify.
 */
function addVerify(program: Command, { productFor, act, note }: Builders): void {
  program
    .command('verify')
    .description(
      "Checks a signed report or certificate: FILE holds the JWS, or the JSON with its `jws` (- for stdin), against the read API's " +
        'published keys or, with --keys, a saved key set (no network); prints what the JWS says; exits 1 if it does not verify',
    )
    .argument('<file>', 'the JWS, or the {report, jws} or {certificate, jws} JSON; - reads stdin')
    .option('--keys <file>', 'a saved key set (rsd certificate keys, or /.well-known/jwks.json as served): verify offline')
    .addOption(connection.api())
    .action(
      act(async (options, file) => {
        let keySet: Jwks;
        if (options.keys !== undefined) keySet = await savedKeySet(options.keys as string);
        else {
          const product = productFor(options);
          const answer = await product.send({ url: `${product.origins.api}/.well-known/jwks.json` });
          if (answer.status !== 200) throw new Error(refusalOf(answer));
          keySet = jsonOf(answer.body) as Jwks;
        }
        return (await verifiedFile(file, keySet, [ACCESS_REVIEW_REPORT_JWS_TYPE, CERTIFICATE_JWS_TYPE], note)).payload;
      }),
    );
}

/** A key set saved to a file; a usage error when it is none. */
async function savedKeySet(path: string): Promise<Jwks> {
  const { readFile } = await import('node:fs/promises');
  let keySet: Jwks;
  try {
    keySet = JSON.parse(await readFile(path, 'utf8')) as Jwks;
  } catch (error) {
    throw new UsageError(`--keys ${path}: not a readable JSON key set (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!Array.isArray(keySet.keys)) throw new UsageError(`--keys ${path}: no "keys" list`);
  return keySet;
}

const SIGNED_KINDS: Record<string, string> = {
  [CERTIFICATE_JWS_TYPE]: 'certificate',
  [ACCESS_REVIEW_REPORT_JWS_TYPE]: 'access review report',
};

/** FILE's JWS (the file itself, or the `jws` of its JSON) checked against the key set, as one of `types`. */
async function verifiedFile(file: string, keySet: Jwks, types: readonly string[], note: (text: string) => void): Promise<VerifiedJws> {
  const { readFile } = await import('node:fs/promises');
  const text = (file === '-' ? await readStdin() : await readFile(file, 'utf8')).trim();
  let saved: unknown = text;
  if (text.startsWith('{')) {
    try {
      saved = (JSON.parse(text) as { jws?: unknown }).jws;
    } catch {
      saved = undefined;
    }
  }
  const jws = typeof saved === 'string' ? saved : '';
  const kind = types.length === 1 ? (SIGNED_KINDS[types[0]!] ?? 'document') : 'signed document';
  try {
    const verified = verifySignedJws(jws, keySet, types);
    note(`rsd: ${SIGNED_KINDS[verified.typ ?? ''] ?? kind} verified (key ${verified.kid})`);
    return verified;
  } catch (error) {
    throw new Error(`${kind} NOT valid: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A refusal the CLI read itself, as the SDK's errors say theirs: the status, the code, the message and the request id. */
function refusalOf(answer: Answer): string {
  let said: { code?: string; message?: string; requestId?: string } = {};
  try {
    said = jsonOf(answer.body) as typeof said;
  } catch {
    // Not JSON: the status and the header's request id say what there is.
  }
  const requestId = said.requestId ?? answer.headers.get('x-request-id');
  return `${answer.status}${said.code ? ` ${said.code}` : ''}: ${said.message ?? 'refused'}${requestId ? ` (request id ${requestId})` : ''}`;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function evidenceOf(answer: Answer) {
  return { status: answer.status, path: answer.path, headers: Object.fromEntries(answer.headers), body: answer.body };
}

/** --verify: the response as received against the published keys; says which key signed it, or refuses it. */
async function verified(
  evidence: { status: number; path: string; headers: Record<string, string>; body: Uint8Array },
  signingKeys: () => Promise<{ keys: { kty: string; crv: string; x: string; kid: string }[] }>,
  note: (line: string) => void,
): Promise<void> {
  const { keys } = await signingKeys();
  const verification = verifyResponseSignature(
    { status: evidence.status, headers: new Headers(evidence.headers), body: Buffer.from(evidence.body), requestPath: evidence.path },
    keys,
  );
  if (!verification.valid) throw new Error(`signature NOT valid: ${verification.reason}`);
  note(`rsd: signature verified (key ${verification.kid}, signed ${verification.created.toISOString()})`);
}

function addPortfolio(program: Command, { productFor, act, note }: Builders): void {
  const portfolio = group(
    program,
    'portfolio',
    'A recipient account, with its key (rsa_…) in RSD_API_KEY: the grants it holds, their scores, its key',
  );
  const recipient = (command: Command) =>
    command
      .addOption(connection.api())
      .addOption(connection.credentials())
      .addOption(connection.apiKey('the recipient account key (rsa_…)'));
  const run = (subcommand: string, shown: (result: unknown, options: Options) => unknown = (result) => result) =>
    act(async (options) =>
      shown(
        await runPortfolioCommand(subcommand, kebab(options), {
          product: productFor(options),
          secondsOf: (value) => secondsOf(value),
          note,
        }),
        options,
      ),
    );

  recipient(portfolio.command('show').description('Its id, name and number of grants')).action(run('show'));
  for (const [name, what] of [
    ['customers', 'its active grants'],
    ['scores', 'the latest score of every grant that allows it'],
    ['pillars', 'the latest breakdown of every grant that allows it'],
  ] as const) {
    recipient(
      listOutput(portfolio.command(name))
        .description(`A page of ${what}, or with --all every page as one list`)
        .option('--limit <n>', 'items in the page (1 to 100, default 50)')
        .option('--cursor <cursor>', 'the page after the one whose nextCursor this is')
        .option('--all', 'every page as one list'),
    ).action(run(name));
  }
  recipient(
    portfolio
      .command('rotate-key')
      .description(
        'A new account key, shown only this once; the old one only reads for the overlap (0 after a suspected leak: it ends at once)',
      )
      .option('--overlap <duration>', 'how long the old key still reads: 0 to 1d (default 1d)')
      .option('--env', 'print an export line for eval: RSD_API_KEY (the new account key)'),
  ).action(run('rotate-key', (rotated, options) => (options.env ? exportsOf(rotated, { accountKey: 'RSD_API_KEY' }) : rotated)));
  recipient(
    portfolio
      .command('leave')
      .description('Ends a grant the account holds; its organization sees it released')
      .requiredOption('--client-id <id>', "the grant's Client ID"),
  ).action(run('leave'));

  // Decision 50: a grant an organization gives the account is an offer, read by nothing until the account accepts it.
  const offers = group(portfolio, 'offers', 'Grants organizations offered to the account: nothing reads one until it is accepted');
  recipient(
    listOutput(offers.command('list'))
      .description('A page of the offers waiting for an answer, or with --all every page as one list')
      .option('--limit <n>', 'offers in the page (1 to 100, default 50)')
      .option('--cursor <cursor>', 'the page after the one whose nextCursor this is')
      .option('--all', 'every page as one list'),
  ).action(run('offers list'));
  recipient(
    offers
      .command('accept')
      .description('Accepts an offer: the account holds the grant from now on, and its organization sees the account')
      .requiredOption('--client-id <id>', "the offer's Client ID"),
  ).action(run('offers accept'));
  recipient(
    offers
      .command('decline')
      .description('Declines an offer: the grant ends, and its organization sees it declined')
      .requiredOption('--client-id <id>', "the offer's Client ID"),
  ).action(run('offers decline'));
  recipient(
    portfolio
      .command('auto-accept')
      .description('Prints the organizations whose offers the account accepts as they are made; --organizations or --none sets them')
      .option('--organizations <list>', 'comma-separated organization ids (at most 1,000): replaces the list')
      .option('--none', 'accept no offer automatically'),
  ).action(run('auto-accept'));
}

/** Whose webhooks a group of commands manages, and how. */
interface WebhookOwnerCommands {
  /** `rsd webhooks …` or `rsd alert-webhooks …`. */
  name: string;
  description: string;
  /** What identifies the owner, as an option, and the options its credential comes with. */
  owner: (command: Command) => Command;
  ownerOption: 'client-id' | 'org';
  /** The events it may subscribe to. */
  events: readonly string[];
  webhooksOf: (product: Product, ownerId: string) => Webhooks<string> | Promise<Webhooks<string>>;
  /** Whether its score.updated deliveries can be filtered (a grant's can; an organization hears no scores). */
  conditions: boolean;
}

/**
 * The webhook lifecycle (decisions 26 and 45) for one owner: create, list, deliveries, delete,
 * update, pause, enable, rotate-secret, test and redeliver, each through the SDK's `Webhooks`.
 */
function addWebhookCommands(program: Command, spec: WebhookOwnerCommands, { io: cliIo, productFor, act, note }: Builders): Command {
  const webhooks = group(program, spec.name, spec.description);
  const { owner } = spec;
  const id = () => new Option('--id <id>', "the webhook's id (wh_…)").makeOptionMandatory();
  const events = `comma-separated: ${spec.events.join(', ')}`;
  const run = (subcommand: string, after: (result: unknown, options: Options) => unknown = (result) => result) =>
    act(async (options, messageId) => {
      const product = productFor(options);
      const { runWebhooksCommand } = await import('./webhooks.js');
      const result = await runWebhooksCommand(
        subcommand,
        { ...kebab(options), ...(messageId === undefined ? {} : { 'message-id': messageId }) },
        {
          webhooksOf: (ownerId) => spec.webhooksOf(product, ownerId),
          owner: { option: spec.ownerOption, events: spec.events },
          env: cliIo.env,
          untilStopped: cliIo.untilStopped,
          out: (line) => cliIo.stdout(`${line}\n`),
          note,
          secondsOf,
        },
      );
      return after(result, options);
    });
  /** The conditions on score.updated deliveries (create and update), where the owner hears scores. */
  const conditions = (command: Command) =>
    spec.conditions
      ? command
          .option('--score-below <n>', 'deliver a score.updated only when the new score is below N (1 to 100)')
          .option('--score-drop-at-least <n>', 'deliver a score.updated only when the score fell by at least N (1 to 100)')
          .option('--grade-changed', 'deliver a score.updated only when the grade changed (with the others: when any holds)')
      : command;

  conditions(
    owner(
      webhooks
        .command('create')
        .description('Subscribes a URL to events: prints the subscription with its secret, shown only this once')
        .requiredOption('--url <url>', 'https, on a public address')
        .requiredOption('--events <list>', events)
        .option('--env', 'print export lines for eval: WEBHOOK_ID and RSD_WEBHOOK_SECRET'),
    ),
  ).action(run('create', (created, options) => (options.env ? exportsOf(created, WEBHOOK_EXPORTS) : created)));
  owner(listOutput(webhooks.command('list')).description('The webhooks, without secrets')).action(run('list'));
  owner(
    listOutput(webhooks.command('deliveries')).description("A webhook's recent delivery attempts, newest first").addOption(id()),
  ).action(run('deliveries'));
  owner(webhooks.command('delete').description('Deletes a webhook').addOption(id())).action(run('delete'));
  const update = conditions(
    owner(
      webhooks
        .command('update')
        .description('Changes what is given and prints the webhook as it is now; the rest stays')
        .addOption(id())
        .option('--url <url>', 'a new URL (https, on a public address)')
        .option('--events <list>', `the events instead of the present ones, ${events}`)
        .addOption(
          new Option('--enabled <boolean>', 'false pauses it, true re-enables it (as pause and enable)').choices(['true', 'false']),
        ),
    ),
  );
  if (spec.conditions) update.option('--every-change', 'remove the conditions: every score.updated is delivered');
  update.action(run('update'));
  owner(webhooks.command('pause').description('Stops its deliveries until it is enabled again').addOption(id())).action(run('pause'));
  owner(
    webhooks
      .command('enable')
      .description(
        'Re-enables a webhook paused or disabled; deliveries resume from now. One disabled for its key (key_ended, key_leaked) needs --url',
      )
      .addOption(id())
      .option('--url <url>', 'sets its URL again (required for one disabled for its key; https, on a public address)'),
  ).action(run('enable'));
  owner(
    webhooks
      .command('rotate-secret')
      .description(
        'A new signing secret, shown only this once; during the overlap each delivery carries a signature with the previous secret too',
      )
      .addOption(id())
      .addOption(
        new Option(
          '--overlap <duration>',
          'how long the previous secret still signs: 0, 90s, 30m, 1h, 1d (default 1d, at most 1d)',
        ).conflicts('overlapSeconds'),
      )
      .option('--overlap-seconds <n>', 'the overlap in seconds, 0 to 86400')
      .option('--env', 'print an export line for eval: RSD_WEBHOOK_SECRET'),
  ).action(run('rotate-secret', (rotated, options) => (options.env ? exportsOf(rotated, { secret: 'RSD_WEBHOOK_SECRET' }) : rotated)));
  owner(
    webhooks
      .command('test')
      .description('Sends a webhook.test delivery, signed as every delivery is; prints its messageId (the webhook-id it carries)')
      .addOption(id()),
  ).action(run('test'));
  owner(
    webhooks
      .command('redeliver')
      .description('Sends one delivery again, with its original payload and webhook-id')
      .argument('<message-id>', `the delivery's webhook-id (msg_…), as rsd ${spec.name} deliveries lists it`)
      .addOption(id()),
  ).action(run('redeliver'));
  webhooks
    .command('listen')
    .summary('A receiver on this machine that verifies and prints deliveries')
    .description(
      'A receiver to try webhooks with: any path takes a POST, verified with RSD_WEBHOOK_SECRET or --secret; prints one JSON line per ' +
        'delivery, {"verified","id","timestamp","type","data"} and the reason when it does not verify; answers 204, 401 when it does ' +
        'not verify, 413 over 1 MB; runs until Ctrl-C or SIGTERM',
    )
    .requiredOption('--port <n>', 'the port to listen on')
    .option('--host <address>', 'the address to listen on (default 127.0.0.1)')
    .option('--secret <whsec_…>', 'the webhook secret (RSD_WEBHOOK_SECRET; prefer the variable)')
    .option('--fail <n>', 'answer the first N deliveries 500, to watch the retries')
    .action(run('listen'));
  return webhooks;
}

function addWebhooks(program: Command, builders: Builders): void {
  addWebhookCommands(
    program,
    {
      name: 'webhooks',
      description: "A grant's webhooks on the notifier, with the grant's API key; and a receiver to try them",
      owner: (command) =>
        command
          .requiredOption('--client-id <id>', "the grant's Client ID")
          .addOption(connection.notifier())
          .addOption(connection.apiKey('the API key, or a recipient account key that holds the grant')),
      ownerOption: 'client-id',
      events: RECIPIENT_WEBHOOK_EVENT_TYPES,
      webhooksOf: (product, clientId) => product.client(clientId).webhooks,
      conditions: true,
    },
    builders,
  );
  addWebhookCommands(
    program,
    {
      name: 'alert-webhooks',
      description:
        "An organization's alert webhooks on the notifier, with its token: told when a grant nears expiry, is first used, is read " +
        'from a new address, meets repeated failed authentications, has its key leaked or is released; and a receiver to try them',
      owner: (command) =>
        command.requiredOption('--org <id>', 'the organization').addOption(connection.notifier()).addOption(connection.token()),
      ownerOption: 'org',
      events: ALERT_TYPES,
      webhooksOf: async (product, org) => (await product.organization(org)).webhooks,
      conditions: false,
    },
    builders,
  );
}

/**
 * A recipient claims its key by the link, the link being its only credential here; it is never printed
 * back. With --into-portfolio the grant goes into a recipient account instead: the one whose key is in
 * RSD_API_KEY, or a new one (named --account-name) whose key is shown once.
 */
async function claimByLink(product: Product, options: Options, link: string, note: (line: string) => void): Promise<unknown> {
  if (!URL.canParse(link)) throw new UsageError('claim needs the claim link: rsd claim URL');
  if (!options.intoPortfolio) {
    if (options.accountName !== undefined) throw new UsageError('--account-name needs --into-portfolio');
    const claimed = (await product.sendJson({ method: 'POST', url: link, body: {} })).body;
    return options.env ? exportsOf(claimed, CREDENTIAL_EXPORTS) : claimed;
  }
  // Only an account key names the account to join: a grant's key (rsk_…) left in RSD_API_KEY means none, a new account.
  const given = product.settings.apiKey;
  const { ACCOUNT_KEY_PREFIX } = await import('@rsd/contracts');
  const accountKey = given?.startsWith(`${ACCOUNT_KEY_PREFIX}_`) ? given : undefined;
  const body = { into: 'account', ...(options.accountName ? { accountName: options.accountName as string } : {}) };
  const joined = (await product.sendJson({ method: 'POST', url: link, headers: accountKey ? { 'x-api-key': accountKey } : {}, body })).body;
  if ('accountKey' in (joined as object)) note('rsd: the account key is shown only this once; keep it now');
  return options.env ? exportsOf(joined, ACCOUNT_EXPORTS) : joined;
}

interface ListedAuthorization {
  clientId: string;
  recipientName: string | null;
  recipientType: string;
  status: string;
  scopes: string[];
  expiresAt: string | null;
  lastUsedAt: string | null;
  usage: { last24h: number; last30d: number };
}

/** `list --output table`: one line per authorization, its use in the last three columns. */
const AUTHORIZATION_COLUMNS: Column[] = (
  [
    ['CLIENT ID', (a) => a.clientId],
    ['RECIPIENT', (a) => a.recipientName ?? '-'],
    ['TYPE', (a) => a.recipientType],
    ['STATUS', (a) => a.status],
    ['SCOPES', (a) => a.scopes.join(',')],
    ['EXPIRES', (a) => a.expiresAt ?? '-'],
    ['LAST USED', (a) => a.lastUsedAt ?? 'never'],
    ['24H', (a) => String(a.usage.last24h)],
    ['30D', (a) => String(a.usage.last30d)],
  ] as [string, (a: ListedAuthorization) => string][]
).map(([header, cell]) => [header, (row) => cell(row as unknown as ListedAuthorization)]);

interface AccessLogEntry {
  at: string;
  requestId: string;
}

const FOLLOW_EVERY_MS = 2_000;
const FOLLOW_PAGE = 500;
const FOLLOW_REMEMBERED = 10_000;

/**
 * `access-log --follow`: the latest entries (--limit, default 10) oldest first, then every entry that
 * appears, one JSON line each, until interrupted. The newest entries are asked for every 2 s and what
 * was not printed yet is printed, oldest first, so an entry that arrives a little late (another
 * replica's batch) is printed too.
 */
async function followAccessLog(
  product: Product,
  org: string,
  clientId: string,
  first: string,
  out: (text: string) => void,
): Promise<never> {
  if (!/^\d{1,3}$/.test(first) || Number(first) < 1) throw new UsageError(`--limit must be a whole number from 1 to 500 (got "${first}")`);
  const printed = new Set<string>();
  const keyOf = (entry: AccessLogEntry) => `${entry.at} ${entry.requestId}`;
  /** Entries older than the first page's oldest were never meant to be printed. */
  let floor: string | undefined;
  for (;;) {
    const limit = floor === undefined ? Number(first) : FOLLOW_PAGE;
    // A new client each time: a minted token lasts minutes, a follower runs for longer.
    const { authorizations } = await product.organization(org);
    const newest: AccessLogEntry[] = [];
    for await (const entry of authorizations.accessLog(clientId, { limit })) {
      newest.push(entry);
      if (newest.length >= limit) break;
    }
    floor ??= newest.at(-1)?.at ?? '';
    const fresh = newest.filter((entry) => entry.at >= (floor ?? '') && !printed.has(keyOf(entry))).reverse();
    for (const entry of fresh) {
      out(`${JSON.stringify(entry)}\n`);
      printed.add(keyOf(entry));
    }
    // The oldest remembered go first: a page of 500 never reaches back to them.
    if (printed.size > FOLLOW_REMEMBERED) for (const key of [...printed].slice(0, printed.size - FOLLOW_REMEMBERED)) printed.delete(key);
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_EVERY_MS));
  }
}

/** A 202 to a revoke or a rotation: recorded, but the read API does not enforce it yet. */
function isPending(record: unknown): boolean {
  return typeof record === 'object' && record !== null && (record as { enforcement?: unknown }).enforcement === 'pending';
}

/** A revoke or a rotation that is recorded but not yet enforced: its record is printed, exit 3. */
export class PendingEnforcement extends Error {
  constructor(
    readonly record: unknown,
    change: 'revocation' | 'rotation',
  ) {
    super(
      change === 'revocation'
        ? 'the revocation is recorded but NOT yet enforced: the event log could not take it in time. ' +
            'The key may still be accepted until it is published (the service keeps trying) or until read-API replicas ' +
            'out of touch with the event log stop serving (FEED_STALENESS_BOUND_MS, 30 s by default). Run the revoke again to check.'
        : 'the rotation is recorded but NOT yet in effect: the event log could not take it in time. ' +
            'Keep the new key (it is shown only now); it works once the service has published the change, and the previous key works until then.',
    );
    this.name = 'PendingEnforcement';
  }
}

/**
 * `--key-delivery claim-link` (and its `--claim-valid`), or `--key-delivery account --account-id rcp_…`,
 * as the create request's fields; the default delivery sends neither.
 */
function keyDeliveryOf(delivery: string | undefined, valid: string | undefined, accountId: string | undefined): Record<string, unknown> {
  if (accountId !== undefined && delivery !== 'account') throw new UsageError('--account-id needs --key-delivery account');
  if (delivery === undefined || delivery === 'response') {
    if (valid !== undefined) throw new UsageError('--claim-valid needs --key-delivery claim-link');
    return {};
  }
  if (delivery === 'account') {
    if (!accountId) throw new UsageError('--key-delivery account needs --account-id rcp_…');
    return { keyDelivery: 'account', recipientAccountId: accountId };
  }
  return { keyDelivery: 'claimLink', ...(valid === undefined ? {} : { claimValidSeconds: secondsOf(valid, '--claim-valid') }) };
}

function listOf(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** `--overlap`, `--claim-valid`: whole seconds, or a number with s, m, h or d. */
export function secondsOf(value: string, option = '--overlap'): number {
  const match = /^(\d+)(s|m|h|d)?$/.exec(value.trim());
  if (!match) throw new UsageError(`${option} must be a whole number of seconds or like 90s, 30m, 1h, 7d (got "${value}")`);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[(match[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

/**
 * Runs `rsd` with `args` (without node and the script): what to print goes to stdout, failures to
 * stderr; resolves the exit code (0 success, 1 refused or unreachable, 2 wrong usage, 3 recorded but
 * not yet in effect).
 */
export async function runCli(args: readonly string[], cliIo: CliIo, edition: CliEdition = {}): Promise<number> {
  const print = (result: unknown) => {
    if (result === undefined || result === '') return;
    cliIo.stdout(typeof result === 'string' ? (result.endsWith('\n') ? result : `${result}\n`) : `${JSON.stringify(result, null, 2)}\n`);
  };
  const program = buildProgram(cliIo, print, edition);
  try {
    await program.parseAsync(args, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and the version asked for are a success; everything else commander refuses is wrong usage.
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? 0 : 2;
    }
    if (error instanceof PendingEnforcement) print(error.record);
    cliIo.stderr(`rsd: ${describeFailure(error)}\n`);
    if (error instanceof UsageError) return 2;
    return error instanceof PendingEnforcement ? 3 : 1;
  }
}
