import { generateKeyPairSync } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ACCOUNT_KEY_PREFIX, MAX_SCORES_PER_BATCH } from '@rsd/contracts';
import { readDevSecret, signDevToken } from '@rsd/platform';
import { callJson, callJsonAnswer, fetchRaw } from './http-client';
import { verifyResponseSignature, type PublishedKey } from './response-signature';
import { chunk, readScoreFile, UsageError } from './score-file';
import { runWebhooksCommand } from './webhooks';
import { runPortfolioCommand } from './portfolio';
import { runBackupCommand } from './backup';
import { untilStopped } from './until-stopped';
import { ACCOUNT_EXPORTS, claimLinkExportsOf, CREDENTIAL_EXPORTS, exportsOf, WEBHOOK_EXPORTS } from './env-output';

const HELP = `rsd: command-line client for the Resilience Score Data API

Usage:
  rsd signing-key [--kid NAME]         (a new Ed25519 key for RESPONSE_SIGNING_KEYS, as a JWK list)
  rsd token [--org ID] [--scope "authorizations:write scores:write"] [--ttl 12h]
  rsd authorizations create --org ID --recipient-type TYPE --scopes s1,s2 [--recipient-name NAME] [--expires-at DATE]
                            [--allowed-cidrs 203.0.113.0/24,2001:db8::/32]
                            [--key-delivery claim-link [--claim-valid 72h]]  (no key yet: a one-time link for the
                            recipient, valid 1h to 7d, default 72h; --env: export CLIENT_ID=… RSD_CLAIM_URL=…)
                            [--key-delivery account --account-id rcp_…]  (straight into a recipient's portfolio: no
                            key and no link; the account's key reads it)
  rsd authorizations claim-link --org ID --client-id CLIENT_ID [--claim-valid 72h] [--env]
                            (a new link for a key not yet claimed; the previous link stops working)
  rsd claim URL [--env]     (a recipient claims its key by the link: prints clientId and apiKey, shown only this once;
                            --env: export CLIENT_ID=… RSD_API_KEY=…)
  rsd claim URL --into-portfolio [--account-name NAME] [--env]
                            (the grant goes into the recipient account whose key (rsa_…) is in RSD_API_KEY, or without one
                            into a new account whose key is shown only this once; --env: export RSD_ACCOUNT_ID=…
                            RSD_API_KEY=<account key> CLIENT_ID=…)
  rsd authorizations rotate --org ID --client-id CLIENT_ID [--overlap 1h]   (the previous key works for the overlap:
                            0, 90s, 30m, 1h, 7d; default 1 day, at most 7 days; the new key is shown once)
                            [--env]  (--env: prints export CLIENT_ID=… RSD_API_KEY=… for eval, also on rotate)
  rsd authorizations list   --org ID [--table]  (JSON, or a table; both show lastUsedAt and reads in 24 h / 30 days)
  rsd authorizations access-log --org ID --client-id CLIENT_ID [--limit N] [--cursor C] [--follow]
                            (who read through it, newest first; --follow prints new entries, one JSON line each,
                            as they come, until Ctrl-C)
  rsd authorizations get    --org ID --client-id CLIENT_ID
  rsd authorizations revoke --org ID --client-id CLIENT_ID
  rsd scores publish FILE              (JSON: a score, an array or {"scores":[...]}; or NDJSON)
  rsd score   --client-id CLIENT_ID [--verify]   (API key from RSD_API_KEY or --api-key)
  rsd pillars --client-id CLIENT_ID [--verify]
  rsd history --client-id CLIENT_ID [--from DATE] [--to DATE] [--limit N] [--cursor C] [--verify]

  rsd portfolio show                    (a recipient account, with its key in RSD_API_KEY: its id, name and grants)
  rsd portfolio customers|scores|pillars [--limit N] [--cursor C] [--all]   (a page of its active grants, or of their
                          latest scores or breakdowns where the grant allows it; --all: every page as one list)
  rsd portfolio rotate-key [--overlap 1h]   (a new account key, shown once; the old one works for the overlap, 0 to 1d,
                          default 1d)
  rsd portfolio leave --client-id CLIENT_ID   (ends a grant the account holds; its organization sees it released)

  rsd webhooks create     --client-id CLIENT_ID --url URL --events score.updated,grade.changed,authorization.ended
                          [--env]  (API key as for rsd score; prints the subscription with its secret, shown only this
                          once; --env: export WEBHOOK_ID=… RSD_WEBHOOK_SECRET=… for eval)
  rsd webhooks list       --client-id CLIENT_ID
  rsd webhooks deliveries --client-id CLIENT_ID --id WEBHOOK_ID   (its recent delivery attempts, newest first)
  rsd webhooks delete     --client-id CLIENT_ID --id WEBHOOK_ID
  rsd webhooks listen     --port N [--host 127.0.0.1] [--fail N]   (a receiver to try webhooks with: any path takes
                          a POST, verified with RSD_WEBHOOK_SECRET or --secret; prints one JSON line per delivery,
                          {"verified","id","timestamp","type","data"} and the reason when it does not verify; answers
                          204, 401 when it does not verify, 413 over 1 MB; --fail N answers the first N deliveries 500
                          to watch the retries; runs until Ctrl-C or SIGTERM)

  rsd backup  FILE [--data-dir DIR]    (embedded runtime, while it serves: a consistent copy of every database of
                                       DATA_DIR into the new file FILE, a tar archive with a manifest; refused if FILE
                                       exists; the keys in DATA_DIR are not in it)
  rsd restore FILE --data-dir DIR [--force] [--without-webhook-key]   (checks the backup and puts it in place; FILE
                          may also be a backup directory of an earlier version; refused while a process has the
                          directory's databases open, and over data already there unless --force, which moves that
                          data aside; a backup with webhook subscriptions needs their key in DATA_DIR/webhook-secret-key
                          or WEBHOOK_SECRET_KEY, unless --without-webhook-key)

  --verify checks the response's signature (RFC 9421, Ed25519) against the read API's published keys
  (/.well-known/jwks.json) and says so on stderr; a response that does not verify exits 1.

Recipient types: insurance_provider, auditor, regulatory_body, partner
Scopes: qr_score, score_trend, pillar_breakdown
Webhook events: score.updated, grade.changed, authorization.ended

Options and environment:
  --api-url URL          read API            (RSD_API_URL, default http://127.0.0.1:8080)
  --credentials-url URL  credentials service (RSD_CREDENTIALS_URL, default http://127.0.0.1:8081)
  --ingest-url URL       score-ingest        (RSD_INGEST_URL, default http://127.0.0.1:8082)
  --notifier-url URL     notifier (webhooks) (RSD_NOTIFIER_URL, default http://127.0.0.1:8083)
  --token JWT            bearer token        (RSD_TOKEN; otherwise one is minted from JWT_HS256_SECRET
                                              or the embedded runtime's secret in DATA_DIR, default .data)
  --api-key KEY          API key, or a recipient account key for rsd portfolio
                                             (RSD_API_KEY; prefer the variable: arguments show in ps)
  --secret whsec_...     webhook secret      (RSD_WEBHOOK_SECRET, for webhooks listen; prefer the variable)

Exit codes: 0 success, 1 the service refused or could not be reached, 2 wrong usage,
            3 a revoke or rotation recorded but not yet in effect (the event log could not take it yet).
`;

/** Options of one type, by name: `values` is then typed by each name. */
function optionsOf<Type extends 'string' | 'boolean', Name extends string>(type: Type, names: readonly Name[]) {
  return Object.fromEntries(names.map((name) => [name, { type }])) as Record<Name, { type: Type }>;
}

const STRING_OPTIONS = [
  'org',
  'scope',
  'ttl',
  'recipient-type',
  'recipient-name',
  'scopes',
  'expires-at',
  'client-id',
  'api-key',
  'limit',
  'from',
  'to',
  'cursor',
  'kid',
  'allowed-cidrs',
  'overlap',
  'api-url',
  'credentials-url',
  'ingest-url',
  'notifier-url',
  'token',
  'url',
  'events',
  'id',
  'port',
  'host',
  'secret',
  'fail',
  'data-dir',
  'key-delivery',
  'claim-valid',
  'account-id',
  'account-name',
] as const;
const BOOLEAN_OPTIONS = ['verify', 'follow', 'table', 'env', 'force', 'without-webhook-key', 'into-portfolio', 'all'] as const;

function parseCommandLine() {
  try {
    return parseArgs({
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...optionsOf('string', STRING_OPTIONS),
        ...optionsOf('boolean', BOOLEAN_OPTIONS),
      },
    });
  } catch (error) {
    process.stderr.write(`rsd: ${error instanceof Error ? error.message : String(error)}\n\n${HELP}`);
    process.exit(2);
  }
}

const { values, positionals } = parseCommandLine();

const urls = {
  api: values['api-url'] ?? process.env.RSD_API_URL ?? 'http://127.0.0.1:8080',
  credentials: values['credentials-url'] ?? process.env.RSD_CREDENTIALS_URL ?? 'http://127.0.0.1:8081',
  ingest: values['ingest-url'] ?? process.env.RSD_INGEST_URL ?? 'http://127.0.0.1:8082',
  notifier: values['notifier-url'] ?? process.env.RSD_NOTIFIER_URL ?? 'http://127.0.0.1:8083',
};

function required(name: keyof typeof values): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

async function devSecret(): Promise<string | undefined> {
  return process.env.JWT_HS256_SECRET || (await readDevSecret(process.env.DATA_DIR ?? '.data'));
}

/** A given token wins; otherwise one is minted for exactly the scope the command needs. */
async function bearer(scope: string, org?: string): Promise<Record<string, string>> {
  const given = values.token ?? process.env.RSD_TOKEN;
  if (given) return { authorization: `Bearer ${given}` };
  const secret = await devSecret();
  if (!secret) {
    throw new UsageError('no token: pass --token or RSD_TOKEN, or set JWT_HS256_SECRET (development only)');
  }
  return { authorization: `Bearer ${await signDevToken(secret, { scope, ...(org ? { org } : {}) }, '5m')}` };
}

function apiKeyHeader(): Record<string, string> {
  const key = values['api-key'] ?? process.env.RSD_API_KEY;
  if (!key) throw new UsageError('no API key: set RSD_API_KEY (or pass --api-key)');
  return { 'x-api-key': key };
}

const authorizationsPath = (org: string) => `${urls.credentials}/v1/organizations/${encodeURIComponent(org)}/authorizations`;
const customerPath = (resource: string) => `${urls.api}/v1/customers/${encodeURIComponent(required('client-id'))}/${resource}`;

async function run(): Promise<unknown> {
  const [command, subcommand, ...rest] = positionals;
  if (values.help || !command) return HELP;
  if (command === 'backup' || command === 'restore') {
    return runBackupCommand(command, positionals.slice(1), values, { env: process.env, note: (line) => process.stderr.write(`${line}\n`) });
  }
  if (command === 'claim') return claimByLink(subcommand);
  if (command === 'portfolio') {
    return runPortfolioCommand(subcommand, values, {
      apiUrl: urls.api,
      credentialsUrl: urls.credentials,
      apiKeyHeader,
      secondsOf: (value) => secondsOf(value),
      note: (line) => process.stderr.write(`${line}\n`),
    });
  }
  switch (`${command} ${subcommand ?? ''}`.trim()) {
    case 'token': {
      const secret = await devSecret();
      if (!secret) throw new UsageError('no development secret: set JWT_HS256_SECRET or start the embedded runtime (npm start) first');
      const scope = values.scope ?? 'authorizations:write scores:write';
      return signDevToken(secret, { scope, ...(values.org ? { org: values.org } : {}) }, values.ttl ?? '12h');
    }
    case 'signing-key': {
      // The private part goes to stdout only: redirect it straight into a secret, never into a file in the repository.
      const { x, d } = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
      const kid = values.kid ?? `rsd-${new Date().toISOString().slice(0, 10)}`;
      return JSON.stringify([{ kty: 'OKP', crv: 'Ed25519', x, d, kid }]);
    }
    case 'authorizations create': {
      const org = required('org');
      const body = {
        recipientType: required('recipient-type'),
        scopes: listOf(required('scopes')),
        ...(values['recipient-name'] ? { recipientName: values['recipient-name'] } : {}),
        ...(values['expires-at'] ? { expiresAt: values['expires-at'] } : {}),
        ...(values['allowed-cidrs'] ? { allowedCidrs: listOf(values['allowed-cidrs']) } : {}),
        ...keyDeliveryOf(values['key-delivery'], values['claim-valid'], values['account-id']),
      };
      const created = await callJson(authorizationsPath(org), { method: 'POST', headers: await bearer('authorizations:write', org), body });
      if (!values.env) return created;
      return 'claim' in (created as object) ? claimLinkExportsOf(created) : exportsOf(created, CREDENTIAL_EXPORTS);
    }
    case 'authorizations claim-link': {
      const org = required('org');
      const url = `${authorizationsPath(org)}/${encodeURIComponent(required('client-id'))}/claim-link`;
      const body = values['claim-valid'] === undefined ? {} : { claimValidSeconds: secondsOf(values['claim-valid'], '--claim-valid') };
      const issued = await callJson(url, { method: 'POST', headers: await bearer('authorizations:write', org), body });
      return values.env ? claimLinkExportsOf(issued) : issued;
    }
    case 'authorizations list': {
      const org = required('org');
      const listed = await callJson(authorizationsPath(org), { headers: await bearer('authorizations:write', org) });
      return values.table ? authorizationTable(listed as { authorizations: ListedAuthorization[] }) : listed;
    }
    case 'authorizations access-log': {
      const org = required('org');
      const url = `${authorizationsPath(org)}/${encodeURIComponent(required('client-id'))}/access-log`;
      if (values.follow) return followAccessLog(url, org);
      const query = new URLSearchParams();
      if (values.limit !== undefined) query.set('limit', values.limit);
      if (values.cursor !== undefined) query.set('cursor', values.cursor);
      return callJson(query.size > 0 ? `${url}?${query.toString()}` : url, { headers: await bearer('authorizations:write', org) });
    }
    case 'authorizations get': {
      const org = required('org');
      return callJson(`${authorizationsPath(org)}/${encodeURIComponent(required('client-id'))}`, {
        headers: await bearer('authorizations:write', org),
      });
    }
    case 'authorizations rotate': {
      const org = required('org');
      const url = `${authorizationsPath(org)}/${encodeURIComponent(required('client-id'))}/rotate`;
      const body = values.overlap === undefined ? {} : { overlapSeconds: secondsOf(values.overlap) };
      const answer = await callJsonAnswer(url, { method: 'POST', headers: await bearer('authorizations:write', org), body });
      if (answer.status === 202) throw new PendingEnforcement(answer.body, 'rotation');
      return values.env ? exportsOf(answer.body, CREDENTIAL_EXPORTS) : answer.body;
    }
    case 'authorizations revoke': {
      const org = required('org');
      const url = `${authorizationsPath(org)}/${encodeURIComponent(required('client-id'))}/revoke`;
      const answer = await callJsonAnswer(url, { method: 'POST', headers: await bearer('authorizations:write', org) });
      if (answer.status === 202) throw new PendingEnforcement(answer.body, 'revocation');
      return answer.body;
    }
    case 'scores publish': {
      const file = rest[0];
      if (!file) throw new UsageError('scores publish needs a FILE');
      const scores = await readScoreFile(file);
      const headers = await bearer('scores:write');
      let accepted = 0;
      for (const batch of chunk(scores, MAX_SCORES_PER_BATCH)) {
        const answer = (await callJson(`${urls.ingest}/v1/scores`, { method: 'POST', headers, body: { scores: batch } })) as {
          accepted: number;
        };
        accepted += answer.accepted;
      }
      return { accepted };
    }
    case 'score':
      return readCustomer('score');
    case 'pillars':
      return readCustomer('pillars');
    case 'history': {
      const query = new URLSearchParams();
      for (const name of ['from', 'to', 'limit', 'cursor'] as const) {
        const value = values[name];
        if (value !== undefined) query.set(name, value);
      }
      return readCustomer('score/history', query.size > 0 ? `?${query.toString()}` : '');
    }
    case 'webhooks create':
      return webhooksCommand().then((created) => (values.env ? exportsOf(created, WEBHOOK_EXPORTS) : created));
    case 'webhooks list':
    case 'webhooks deliveries':
    case 'webhooks delete':
    case 'webhooks listen':
      return webhooksCommand();
    default:
      throw new UsageError(`unknown command: ${positionals.join(' ')}\n\n${HELP}`);
  }
}

/**
 * Decision 38: a recipient claims its key by the link, the link being its only credential here; it is
 * never printed back. With --into-portfolio (decision 42) the grant goes into a recipient account
 * instead: the one whose key is in RSD_API_KEY, or a new one (named --account-name) whose key is shown once.
 */
async function claimByLink(link: string | undefined): Promise<unknown> {
  if (!link || !URL.canParse(link)) throw new UsageError('claim needs the claim link: rsd claim URL');
  if (!values['into-portfolio']) {
    if (values['account-name'] !== undefined) throw new UsageError('--account-name needs --into-portfolio');
    const claimed = await callJson(link, { method: 'POST', body: {} });
    return values.env ? exportsOf(claimed, CREDENTIAL_EXPORTS) : claimed;
  }
  // Only an account key names the account to join: a grant's key (rsk_…) left in RSD_API_KEY means none, a new account.
  const given = values['api-key'] ?? process.env.RSD_API_KEY;
  const accountKey = given?.startsWith(`${ACCOUNT_KEY_PREFIX}_`) ? given : undefined;
  const body = { into: 'account', ...(values['account-name'] ? { accountName: values['account-name'] } : {}) };
  const joined = await callJson(link, { method: 'POST', headers: accountKey ? { 'x-api-key': accountKey } : {}, body });
  if ('accountKey' in (joined as object)) process.stderr.write('rsd: the account key is shown only this once; keep it now\n');
  return values.env ? exportsOf(joined, ACCOUNT_EXPORTS) : joined;
}

function webhooksCommand(): Promise<unknown> {
  return runWebhooksCommand(positionals[1]!, values, {
    notifierUrl: urls.notifier,
    apiKeyHeader,
    env: process.env,
    untilStopped,
    out: (line) => process.stdout.write(`${line}\n`),
    note: (line) => process.stderr.write(`${line}\n`),
  });
}

/** A customer resource; with --verify, only once its signature checks out against the published keys. */
async function readCustomer(resource: string, query = ''): Promise<unknown> {
  if (!values.verify) return callJson(`${customerPath(resource)}${query}`, { headers: apiKeyHeader() });
  const url = new URL(`${customerPath(resource)}${query}`);
  const response = await fetchRaw(url.href, apiKeyHeader());
  const jwks = (await callJson(`${urls.api}/.well-known/jwks.json`)) as { keys?: PublishedKey[] };
  const verification = verifyResponseSignature({ ...response, requestPath: url.pathname }, jwks.keys ?? []);
  if (!verification.valid) throw new Error(`signature NOT valid: ${verification.reason}`);
  process.stderr.write(`rsd: signature verified (key ${verification.kid}, signed ${verification.created.toISOString()})\n`);
  return JSON.parse(response.body.toString('utf8')) as unknown;
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

/** `list --table`: one line per authorization, its use (decision 20) in the last three columns. */
function authorizationTable({ authorizations }: { authorizations: ListedAuthorization[] }): string {
  const header = ['CLIENT ID', 'RECIPIENT', 'TYPE', 'STATUS', 'SCOPES', 'EXPIRES', 'LAST USED', '24H', '30D'];
  const rows = authorizations.map((a) => [
    a.clientId,
    a.recipientName ?? '-',
    a.recipientType,
    a.status,
    a.scopes.join(','),
    a.expiresAt ?? '-',
    a.lastUsedAt ?? 'never',
    String(a.usage.last24h),
    String(a.usage.last30d),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

interface AccessLogEntry {
  at: string;
  requestId: string;
}

const FOLLOW_EVERY_MS = 2_000;
const FOLLOW_PAGE = 500;
const FOLLOW_REMEMBERED = 10_000;

/**
 * `access-log --follow`: the latest entries (--limit, default 10) oldest first, then every entry that
 * appears, one JSON line each, until interrupted. The newest page is asked for every 2 s and what
 * was not printed yet is printed, oldest first, so an entry that arrives a little late (another
 * replica's batch) is printed too.
 */
async function followAccessLog(url: string, org: string): Promise<never> {
  const printed = new Set<string>();
  const keyOf = (entry: AccessLogEntry) => `${entry.at} ${entry.requestId}`;
  /** Entries older than the first page's oldest were never meant to be printed. */
  let floor: string | undefined;
  for (;;) {
    const limit = floor === undefined ? (values.limit ?? '10') : String(FOLLOW_PAGE);
    const page = (await callJson(`${url}?limit=${encodeURIComponent(limit)}`, { headers: await bearer('authorizations:write', org) })) as {
      items: AccessLogEntry[];
    };
    floor ??= page.items.at(-1)?.at ?? '';
    const fresh = page.items.filter((entry) => entry.at >= (floor ?? '') && !printed.has(keyOf(entry))).reverse();
    for (const entry of fresh) {
      process.stdout.write(`${JSON.stringify(entry)}\n`);
      printed.add(keyOf(entry));
    }
    // The oldest remembered go first: a page of 500 never reaches back to them.
    if (printed.size > FOLLOW_REMEMBERED) for (const key of [...printed].slice(0, printed.size - FOLLOW_REMEMBERED)) printed.delete(key);
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_EVERY_MS));
  }
}

/** Decision 29: a 202 to a revoke is a recorded revocation that the read API does not enforce yet. */
class PendingEnforcement extends Error {
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
 * `--key-delivery claim-link` (and its `--claim-valid`), or `--key-delivery account --account-id rcp_…`
 * (decision 42), as the create request's fields; the default delivery sends neither.
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
  if (delivery !== 'claim-link') throw new UsageError(`--key-delivery must be response, claim-link or account (got "${delivery}")`);
  return { keyDelivery: 'claimLink', ...(valid === undefined ? {} : { claimValidSeconds: secondsOf(valid, '--claim-valid') }) };
}

function listOf(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** `--overlap`, `--claim-valid`: whole seconds, or a number with s, m, h or d. */
function secondsOf(value: string, option = '--overlap'): number {
  const match = /^(\d+)(s|m|h|d)?$/.exec(value.trim());
  if (!match) throw new UsageError(`${option} must be a whole number of seconds or like 90s, 30m, 1h, 7d (got "${value}")`);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[(match[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

/** Nothing for a command that has nothing to show (a delete, a listener that stopped). */
const print = (result: unknown) => {
  if (result !== undefined) process.stdout.write(typeof result === 'string' ? `${result}\n` : `${JSON.stringify(result, null, 2)}\n`);
};

run().then(print, (error: unknown) => {
  if (error instanceof PendingEnforcement) print(error.record);
  process.stderr.write(`rsd: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = error instanceof UsageError ? 2 : error instanceof PendingEnforcement ? 3 : 1;
});
