import { execFile, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { aScoreSubmission, request } from '@rsd/testkit';
import { eventually, REPO_ROOT, type EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import * as orgAdmin from '../support/organization-admin';

// Decisions 20 and 21 on the embedded runtime, as `npm start` runs: reads of every kind, then the
// access log and the usage the credentials service answers, over HTTP and through the CLI.

const run = promisify(execFile);
const ORG = 'access-org';
const QUIET_ORG = 'quiet-org';
const TODAY = new Date().toISOString().slice(0, 10);
/** The address every read says it comes from (one trusted proxy hop); the allow list holds its range. */
const INSIDE = '198.51.100.7';
const OUTSIDE = '192.0.2.55';

let dataDir: string;
let product: EmbeddedProcess;
const issuedKeys: string[] = [];
const tokens: Record<string, string> = {};

interface Entry {
  at: string;
  resource: string;
  status: number;
  code: string | null;
  clientAddress: string | null;
  requestId: string;
}

async function createAuthorization(org: string, body: object): Promise<orgAdmin.IssuedCredential> {
  const created = await orgAdmin.createAuthorization(product.urls.credentials, org, tokens[org]!, body);
  issuedKeys.push(created.apiKey);
  return created;
}

const read = (credential: orgAdmin.IssuedCredential, resource = 'score', headers: Record<string, string> = {}) =>
  request(`${product.urls.readApi}/v1/customers/${credential.clientId}/${resource}`, {
    headers: { 'x-api-key': credential.apiKey, 'x-forwarded-for': INSIDE, ...headers },
  });

const authorizationUrl = (org: string, clientId: string) =>
  `${product.urls.credentials}/v1/organizations/${org}/authorizations/${clientId}`;
const admin = (url: string, org = ORG, method = 'GET') => request(url, { method, headers: { authorization: `Bearer ${tokens[org]}` } });

async function rsd(args: string[]) {
  const { stdout } = await run('node', [join(REPO_ROOT, 'tools/cli/bin/rsd.js'), ...args], {
    env: { ...process.env, DATA_DIR: dataDir, RSD_CREDENTIALS_URL: product.urls.credentials, RSD_API_URL: product.urls.readApi },
  });
  return stdout;
}

beforeAll(async () => {
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-e2e-access-', { TRUST_PROXY_HOPS: '1', RATE_LIMIT_PER_MINUTE: '8' }));
  for (const org of [ORG, QUIET_ORG]) tokens[org] = await devTokenFor(dataDir, org);
  await orgAdmin.postScore(product.urls.scoreIngest, tokens[ORG]!, aScoreSubmission({ organizationId: ORG, scoreDate: TODAY, score: 70 }));
}, 90_000);

afterAll(() => stopAndRemove(product, dataDir));

describe('access log and usage on the embedded runtime (decisions 20 and 21)', () => {
  test('when reads of every kind are made, then each is listed within 10 s with its code, and usage counts the successful ones', async () => {
    const reader = await createAuthorization(ORG, { recipientType: 'auditor', scopes: ['qr_score'], allowedCidrs: ['198.51.100.0/24'] });
    const other = await createAuthorization(ORG, { recipientType: 'partner', scopes: ['qr_score'] });
    const quiet = await createAuthorization(QUIET_ORG, { recipientType: 'partner', scopes: ['qr_score', 'pillar_breakdown'] });
    await eventually(async () => ((await read(reader)).status === 200 ? true : undefined));

    const made: { status: number; requestId: string; sentAt: number }[] = [];
    const note = async (answer: Promise<Awaited<ReturnType<typeof read>>>) => {
      const sentAt = performance.now();
      const done = await answer;
      made.push({ status: done.status, requestId: done.headers.get('x-request-id') ?? '', sentAt });
      // The listing is ordered by `at`, then by request id (decision 21): two reads in one millisecond
      // are listed in their ids' order, not in the order sent. The next read is sent once the clock (the
      // product's too: one machine) has moved past the millisecond this one was answered in.
      const answeredAt = Date.now();
      await eventually(() => Promise.resolve(Date.now() > answeredAt || undefined), 1_000, 1);
      return done;
    };
    const first = await note(read(reader));
    await note(read(reader, 'score', { 'if-none-match': first.headers.get('etag') ?? '' }));
    await note(read(reader, 'pillars'));
    await note(read(reader, 'score/history'));
    await note(read(reader, 'score', { 'x-forwarded-for': OUTSIDE }));
    await note(read({ ...reader, apiKey: other.apiKey }));
    await note(read(reader));
    await note(read(reader));
    await note(read(reader));
    // The 8th counted request of the minute (the ETag's first read was one), and then one more: a 429.
    await note(read(reader));
    await note(read(reader));
    const refusedQuietly = await note(read(quiet, 'pillars'));
    expect(refusedQuietly.body.code).toBe('PILLARS_NOT_FOUND');

    const listed = async (org: string, clientId: string) =>
      (await admin(`${authorizationUrl(org, clientId)}/access-log?limit=500`, org)).body.items as Entry[];
    const last = made.at(-2)!;
    const entries = await eventually(async () => {
      const items = await listed(ORG, reader.clientId);
      return items.some((entry) => entry.requestId === last.requestId) ? items : undefined;
    }, 10_000);
    process.stderr.write(`[access-log] the last read was listed ${(performance.now() - last.sentAt).toFixed(0)} ms after its request\n`);

    expect(entries.map(({ resource, status, code }) => [resource, status, code]).reverse()).toEqual([
      ['score', 200, null],
      ['score', 200, null],
      ['score', 304, null],
      ['pillars', 403, 'INSUFFICIENT_SCOPE'],
      ['history', 403, 'INSUFFICIENT_SCOPE'],
      ['score', 403, 'ADDRESS_NOT_ALLOWED'],
      ['score', 401, 'INVALID_API_KEY'],
      ['score', 200, null],
      ['score', 200, null],
      ['score', 200, null],
      ['score', 429, 'RATE_LIMITED'],
      ['score', 429, 'RATE_LIMITED'],
    ]);
    expect(entries.filter((entry) => entry.code === 'ADDRESS_NOT_ALLOWED').map((entry) => entry.clientAddress)).toEqual([OUTSIDE]);
    expect(entries.filter((entry) => entry.code !== 'ADDRESS_NOT_ALLOWED').every((entry) => entry.clientAddress === INSIDE)).toBe(true);
    expect(await listed(QUIET_ORG, quiet.clientId)).toEqual([expect.objectContaining({ status: 404, code: 'PILLARS_NOT_FOUND' })]);

    const successes = entries.filter((entry) => entry.status < 400);
    const record = await admin(authorizationUrl(ORG, reader.clientId));
    expect(record.body).toMatchObject({ lastUsedAt: successes[0]!.at, usage: { last24h: successes.length, last30d: successes.length } });
    const quietRecord = await admin(authorizationUrl(QUIET_ORG, quiet.clientId), QUIET_ORG);
    expect(quietRecord.body).toMatchObject({ lastUsedAt: null, usage: { last24h: 0, last30d: 0 } });

    const revoked = await admin(`${authorizationUrl(ORG, reader.clientId)}/revoke`, ORG, 'POST');
    expect(revoked.body).toMatchObject({ status: 'revoked', usage: { last24h: successes.length } });
    expect((await read(reader)).body.code).toBe('CREDENTIAL_INACTIVE');
    const afterRevoke = await eventually(async () => {
      const [newest] = await listed(ORG, reader.clientId);
      return newest?.code === 'CREDENTIAL_INACTIVE' ? newest : undefined;
    }, 10_000);
    expect(afterRevoke.status).toBe(401);
  }, 60_000);

  test('when the CLI lists authorizations as a table or follows an access log, then usage and new entries appear', async () => {
    const credential = await createAuthorization(ORG, {
      recipientType: 'regulatory_body',
      recipientName: 'Watchdog',
      scopes: ['qr_score'],
    });
    await eventually(async () => ((await read(credential)).status === 200 ? true : undefined));
    // `rsd authorizations access-log` for this grant; each call adds its own options.
    const accessLog = ['authorizations', 'access-log', '--org', ORG, '--client-id', credential.clientId];

    const follower = spawn('node', [join(REPO_ROOT, 'tools/cli/bin/rsd.js'), ...accessLog, '--follow'], {
      env: { ...process.env, DATA_DIR: dataDir, RSD_CREDENTIALS_URL: product.urls.credentials },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let followed = '';
    follower.stdout.on('data', (chunk: Buffer) => (followed += chunk.toString('utf8')));
    try {
      await eventually(() => Promise.resolve(followed.split('\n').filter(Boolean).length >= 1 ? true : undefined), 10_000);
      const later = await read(credential, 'pillars');
      const requestId = later.headers.get('x-request-id') ?? '';
      await eventually(() => Promise.resolve(followed.includes(requestId) ? true : undefined), 15_000);
      const lines = followed
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Entry);
      expect(lines.at(-1)).toMatchObject({ requestId, status: 403, code: 'INSUFFICIENT_SCOPE', resource: 'pillars' });
    } finally {
      follower.kill('SIGINT');
    }

    const table = await eventually(async () => {
      const text = await rsd(['authorizations', 'list', '--org', ORG, '--table']);
      const row = text.split('\n').find((line) => line.startsWith(credential.clientId));
      return row && /\s1\s+1$/.test(row) ? text : undefined;
    }, 10_000);
    expect(table.split('\n')[0]).toMatch(/^CLIENT ID\s+RECIPIENT\s+TYPE\s+STATUS\s+SCOPES\s+EXPIRES\s+LAST USED\s+24H\s+30D$/);
    const page = JSON.parse(await rsd([...accessLog, '--limit', '1'])) as {
      items: Entry[];
      nextCursor: string | null;
    };
    expect(page.items).toHaveLength(1);
    expect(typeof page.nextCursor).toBe('string');
    // Decision 54's and 55's filters, as the API takes them.
    const refused = JSON.parse(await rsd([...accessLog, '--resource', 'pillars', '--status', '4xx'])) as { items: Entry[] };
    expect(refused.items.length).toBeGreaterThan(0);
    expect(refused.items.every((entry) => entry.resource === 'pillars' && entry.status === 403)).toBe(true);
  }, 60_000);

  test('when the run is over, then no raw API key is in the access log files', async () => {
    // The access-log database and its write-ahead log (decision 21).
    const files = (await readdir(dataDir)).filter((name) => name.startsWith('access-log.sqlite')).map((name) => join(dataDir, name));
    expect(files.length).toBeGreaterThan(0);
    const texts = await Promise.all(files.map((file) => readFile(file, 'utf8')));
    for (const key of issuedKeys) for (const text of texts) expect(text.includes(key)).toBe(false);
  });
});
