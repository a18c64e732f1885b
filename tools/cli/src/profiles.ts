import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { UsageError } from './score-file';

/** How a profile gets its bearer token: one kept in the file, or fetched with an OAuth client's credentials (RFC 6749 §4.4). */
export type ProfileAuth =
  | { token: string }
  | { clientId: string; clientSecret: string; tokenUrl: string; audience?: string | undefined; scope?: string | undefined };

/** A deployment the CLI is used against: where its services answer, and how it authenticates. */
export interface Profile {
  apiUrl: string;
  credentialsUrl: string;
  ingestUrl?: string | undefined;
  notifierUrl?: string | undefined;
  auth?: ProfileAuth | undefined;
}

/** The profile used when none is named (neither --profile nor RSD_PROFILE). */
export const DEFAULT_PROFILE = 'default';
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * The config file: `$XDG_CONFIG_HOME/rsd/config.toml`, or `$HOME/.config/rsd/config.toml` (the XDG base directory
 * default). Neither set (a test's environment): none, so nothing is read from the machine's home.
 */
export function configPath(env: Record<string, string | undefined>): string | undefined {
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'rsd', 'config.toml');
  if (env.HOME) return join(env.HOME, '.config', 'rsd', 'config.toml');
  return undefined;
}

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME.test(name)) throw new UsageError(`a profile's name is 1 to 64 letters, digits, - and _ (got "${name}")`);
  return name;
}

/** Every profile in the file (none when there is no file). A file that is not the CLI's TOML is a usage error, never a guess. */
export async function readProfiles(path: string | undefined): Promise<Record<string, Profile>> {
  if (path === undefined) return {};
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = parse(text);
  } catch (error) {
    throw new UsageError(`${path} is not valid TOML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  const profiles = (parsed.profiles ?? {}) as Record<string, Record<string, unknown>>;
  return Object.fromEntries(Object.entries(profiles).map(([name, table]) => [name, profileOf(table, `${path}: profile ${name}`)]));
}

/** One profile's table as the file spells it (snake_case keys, an `oauth` table for client credentials). */
function profileOf(table: Record<string, unknown>, where: string): Profile {
  const text = (value: unknown, key: string, required = false): string | undefined => {
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'string' || value === '') throw new UsageError(`${where}: ${key} must be a non-empty string`);
    return value;
  };
  const oauth = table.oauth as Record<string, unknown> | undefined;
  const token = text(table.token, 'token');
  let auth: ProfileAuth | undefined;
  if (oauth !== undefined) {
    auth = {
      clientId: text(oauth.client_id, 'oauth.client_id', true)!,
      clientSecret: text(oauth.client_secret, 'oauth.client_secret', true)!,
      tokenUrl: text(oauth.token_url, 'oauth.token_url', true)!,
      audience: text(oauth.audience, 'oauth.audience'),
      scope: text(oauth.scope, 'oauth.scope'),
    };
  } else if (token !== undefined) auth = { token };
  return {
    apiUrl: text(table.api_url, 'api_url', true)!,
    credentialsUrl: text(table.credentials_url, 'credentials_url', true)!,
    ingestUrl: text(table.ingest_url, 'ingest_url'),
    notifierUrl: text(table.notifier_url, 'notifier_url'),
    auth,
  };
}

function tableOf(profile: Profile): Record<string, unknown> {
  const table: Record<string, unknown> = { api_url: profile.apiUrl, credentials_url: profile.credentialsUrl };
  if (profile.ingestUrl) table.ingest_url = profile.ingestUrl;
  if (profile.notifierUrl) table.notifier_url = profile.notifierUrl;
  const auth = profile.auth;
  if (auth && 'token' in auth) table.token = auth.token;
  else if (auth) {
    table.oauth = {
      client_id: auth.clientId,
      client_secret: auth.clientSecret,
      token_url: auth.tokenUrl,
      ...(auth.audience ? { audience: auth.audience } : {}),
      ...(auth.scope ? { scope: auth.scope } : {}),
    };
  }
  return table;
}

/**
 * Writes every profile: the directory made 0700 and the file 0600 (it holds tokens and client secrets), written
 * to a file beside it and renamed over it, so that a reader never sees half a file and the mode holds from the first byte.
 */
export async function writeProfiles(path: string, profiles: Record<string, Profile>): Promise<void> {
  const directory = dirname(path);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  await chmod(directory, 0o700);
  const text = stringify({ profiles: Object.fromEntries(Object.entries(profiles).map(([name, profile]) => [name, tableOf(profile)])) });
  const staged = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(staged, `# rsd profiles (rsd login, rsd logout): holds credentials, keep it mode 0600\n${text}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
    await chmod(staged, 0o600);
    await rename(staged, path);
  } finally {
    await rm(staged, { force: true });
  }
}
