import { readFile } from 'node:fs/promises';
import { ApiConnectionError, ApiTimeoutError } from '@resilience-score/client';
import { Option, type Command } from 'commander';
import { listOutput } from './output';
import { checkProfileName, configPath, DEFAULT_PROFILE, readProfiles, writeProfiles, type Profile, type ProfileAuth } from './profiles';
import { UsageError } from './score-file';

type Options = Record<string, unknown>;

/** What the profile commands take from the program that holds them. */
export interface ProfileCommandDeps {
  env: Record<string, string | undefined>;
  /** The profile named by --profile or RSD_PROFILE, or the default one. */
  profileName: () => string;
  /** All of stdin, for --token-stdin. */
  stdin: () => Promise<string>;
  fetch?: typeof fetch | undefined;
  act: (action: (options: Options, ...args: string[]) => Promise<unknown>) => (...args: unknown[]) => Promise<void>;
  note: (line: string) => void;
}

/** The profile selected, as the program reads it before a command runs. */
export interface SelectedProfile {
  name: string;
  /** Whether it was named (--profile, RSD_PROFILE): a named profile that does not exist is an error, the default one is not. */
  named: boolean;
  profile: Profile | undefined;
}

/**
 * The profile to use: --profile, else RSD_PROFILE, else `default`. Read once before a command runs; a file that
 * cannot be read fails only the commands that use a profile (by `use`), never `login` or `completion`.
 */
export async function selectProfile(env: Record<string, string | undefined>, given: string | undefined): Promise<() => SelectedProfile> {
  const name = given ?? (env.RSD_PROFILE || undefined);
  let profiles: Record<string, Profile>;
  try {
    profiles = await readProfiles(configPath(env));
  } catch (error) {
    return () => {
      throw error;
    };
  }
  return () => {
    const selected = {
      name: checkProfileName(name ?? DEFAULT_PROFILE),
      named: name !== undefined,
      profile: profiles[name ?? DEFAULT_PROFILE],
    };
    if (selected.named && selected.profile === undefined) {
      throw new UsageError(
        `no profile "${selected.name}" in ${configPath(env) ?? 'the config file'}: rsd login --profile ${selected.name} … makes it`,
      );
    }
    return selected;
  };
}

/**
 * A bearer token for an OAuth client by the client-credentials grant (RFC 6749 §4.4): a form-encoded POST to the token
 * URL with the client authenticated by HTTP Basic (client_secret_basic, §2.3.1: each part form-encoded first). The
 * token is kept in memory only; what a failure says never holds the secret.
 */
export async function fetchClientToken(
  auth: Extract<ProfileAuth, { clientId: string }>,
  send: typeof fetch = fetch,
  timeoutMs = 10_000,
): Promise<{ token: string; expiresIn: number | undefined }> {
  const form = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  if (auth.audience) body.set('audience', auth.audience);
  if (auth.scope) body.set('scope', auth.scope);
  const target = `POST ${new URL(auth.tokenUrl).origin}${new URL(auth.tokenUrl).pathname}`;
  const timer = AbortSignal.timeout(timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await send(auth.tokenUrl, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${form(auth.clientId)}:${form(auth.clientSecret)}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: body.toString(),
      redirect: 'manual',
      signal: timer,
    });
    text = await response.text();
  } catch (error) {
    if (timer.aborted) throw new ApiTimeoutError(`${target}: no token within ${timeoutMs} ms`, { cause: error });
    throw new ApiConnectionError(`${target}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  let answer: { access_token?: unknown; token_type?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    // Not JSON: the status says it.
  }
  if (!response.ok) {
    const said =
      typeof answer.error === 'string'
        ? ` ${answer.error}${typeof answer.error_description === 'string' ? `: ${answer.error_description}` : ''}`
        : '';
    throw new Error(`the token URL refused client ${auth.clientId}: ${target} answered ${response.status}${said}`);
  }
  if (typeof answer.access_token !== 'string' || answer.access_token === '') throw new Error(`${target}: the answer has no access_token`);
  if (answer.token_type !== undefined && (typeof answer.token_type !== 'string' || answer.token_type.toLowerCase() !== 'bearer')) {
    throw new Error(`${target}: token_type ${JSON.stringify(answer.token_type)}, not Bearer`);
  }
  return { token: answer.access_token, expiresIn: typeof answer.expires_in === 'number' ? answer.expires_in : undefined };
}

/**
 * The token source of a client-credentials profile: a token fetched when first needed and again when it is within
 * 30 s of its expiry (a `--follow` runs for longer than a token lasts), in memory only.
 */
export function clientTokenSource(auth: Extract<ProfileAuth, { clientId: string }>, send?: typeof fetch): () => Promise<string> {
  let held: { token: string; until: number } | undefined;
  return async () => {
    if (held && Date.now() < held.until) return held.token;
    const { token, expiresIn } = await fetchClientToken(auth, send);
    held = { token, until: expiresIn === undefined ? Number.POSITIVE_INFINITY : Date.now() + (expiresIn - 30) * 1000 };
    return token;
  };
}

function urlOption(options: Options, name: string, flag: string): string | undefined {
  const value = options[name] as string | undefined;
  if (value === undefined) return undefined;
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
    throw new UsageError(`${flag} must be an http or https URL (got "${value}")`);
  return value.replace(/\/+$/, '');
}

/** The credential `rsd login` was given: exactly one of a token (from a file or stdin) and an OAuth client. */
async function authOf(options: Options, deps: ProfileCommandDeps): Promise<ProfileAuth> {
  const client = ['clientId', 'clientSecretFile', 'tokenUrl'].filter((name) => options[name] !== undefined);
  const ways = [options.tokenFile !== undefined, options.tokenStdin === true, client.length > 0].filter(Boolean).length;
  if (ways !== 1)
    throw new UsageError(
      'rsd login takes one of --token-file FILE, --token-stdin, or --client-id with --client-secret-file and --token-url',
    );
  if (client.length > 0) {
    if (client.length < 3) throw new UsageError('--client-id, --client-secret-file and --token-url go together');
    const clientSecret = await fileText(options.clientSecretFile as string, '--client-secret-file');
    return {
      clientId: options.clientId as string,
      clientSecret,
      tokenUrl: urlOption(options, 'tokenUrl', '--token-url')!,
      audience: options.audience as string | undefined,
      scope: options.scope as string | undefined,
    };
  }
  if (options.audience !== undefined || options.scope !== undefined) throw new UsageError('--audience and --scope go with --client-id');
  const token = options.tokenStdin ? (await deps.stdin()).trim() : await fileText(options.tokenFile as string, '--token-file');
  if (token === '' || /\s/.test(token)) throw new UsageError('the token must be one word on one line (a bearer token)');
  return { token };
}

async function fileText(path: string, flag: string): Promise<string> {
  try {
    const text = (await readFile(path, 'utf8')).trim();
    if (text === '') throw new UsageError(`${flag} ${path} is empty`);
    return text;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${flag} ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

/** `rsd login`, `rsd logout` and `rsd profiles list`: the deployments the CLI is used against, in the config file. */
export function addProfileCommands(program: Command, profiles: Command, deps: ProfileCommandDeps): void {
  const { act, note, env } = deps;
  const path = (): string => {
    const file = configPath(env);
    if (file === undefined) throw new UsageError('no config directory: set XDG_CONFIG_HOME or HOME');
    return file;
  };

  program
    .command('login')
    .summary('Keeps a profile: where a deployment answers, and its token or OAuth client')
    .description(
      'Keeps a profile (--profile, default "default") in $XDG_CONFIG_HOME/rsd/config.toml (mode 0600): the URLs of a deployment and ' +
        'a bearer token (from a file or stdin, never an argument), or an OAuth client whose tokens the CLI fetches when it needs ' +
        'one (client credentials grant) and keeps in memory only. The environment (RSD_API_URL, RSD_TOKEN, …) overrides it',
    )
    .addOption(new Option('--api-url <url>', 'the read API').makeOptionMandatory())
    .addOption(new Option('--credentials-url <url>', 'the credentials service').makeOptionMandatory())
    .option('--ingest-url <url>', 'score ingest (for scores publish)')
    .option('--notifier-url <url>', 'the notifier (for webhooks)')
    .option('--token-file <file>', 'a file holding the bearer token')
    .option('--token-stdin', 'read the bearer token from stdin')
    .option('--client-id <id>', 'an OAuth client: its id')
    .option('--client-secret-file <file>', "the OAuth client's secret, in a file")
    .option('--token-url <url>', "the OAuth authorization server's token endpoint")
    .option('--audience <audience>', 'the audience to ask the token for (with --client-id)')
    .option('--scope <scopes>', 'the scopes to ask the token for, space-separated (with --client-id)')
    .action(
      act(async (options) => {
        const name = checkProfileName(deps.profileName());
        const auth = await authOf(options, deps);
        // An OAuth client is tried once now, so that a wrong secret or URL is told at login and not at the first command.
        if ('clientId' in auth) await fetchClientToken(auth, deps.fetch);
        const profile: Profile = {
          apiUrl: urlOption(options, 'apiUrl', '--api-url')!,
          credentialsUrl: urlOption(options, 'credentialsUrl', '--credentials-url')!,
          ingestUrl: urlOption(options, 'ingestUrl', '--ingest-url'),
          notifierUrl: urlOption(options, 'notifierUrl', '--notifier-url'),
          auth,
        };
        const file = path();
        await writeProfiles(file, { ...(await readProfiles(file)), [name]: profile });
        note(`rsd: profile "${name}" saved in ${file}`);
        return undefined;
      }),
    );

  program
    .command('logout')
    .description('Removes a profile (--profile, default "default") and its credentials from the config file')
    .action(
      act(async () => {
        const name = checkProfileName(deps.profileName());
        const file = path();
        const { [name]: removed, ...rest } = await readProfiles(file);
        if (removed === undefined) throw new UsageError(`no profile "${name}" in ${file}`);
        await writeProfiles(file, rest);
        note(`rsd: profile "${name}" removed from ${file}`);
        return undefined;
      }),
    );

  listOutput(
    profiles.command('list').description('The profiles in the config file, without their secrets; `selected` is the one commands use now'),
  ).action(
    act(async () => {
      const selected = deps.profileName();
      const listed = Object.entries(await readProfiles(configPath(env))).map(([name, profile]) => ({
        name,
        selected: name === selected,
        apiUrl: profile.apiUrl,
        credentialsUrl: profile.credentialsUrl,
        ingestUrl: profile.ingestUrl ?? null,
        notifierUrl: profile.notifierUrl ?? null,
        auth: profile.auth === undefined ? 'none' : 'token' in profile.auth ? 'token' : 'client-credentials',
        clientId: profile.auth && 'clientId' in profile.auth ? profile.auth.clientId : null,
        tokenUrl: profile.auth && 'clientId' in profile.auth ? profile.auth.tokenUrl : null,
      }));
      return { profiles: listed };
    }),
  );
}
