import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, eventually, runRsd, type EmbeddedProcess } from '../support/embedded-process';
import { startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import type { CliOutcome } from '../support/rsd-cli';

const run = promisify(execFile);
const ORG = 'cli-package-org';

/*
 * Decision 57: the CLI as a user installs it, @resilience-score/cli from its tarball, installed globally with no
 * registry (a dead one, and an empty cache), run from a directory with no checkout with a HOME and XDG_CONFIG_HOME of
 * its own: it logs in to the running product with a profile and runs the README's walkthrough. scripts/ci/sdk-packages.sh
 * gives the bin it installed (RSD_CLI_PACKAGE_BIN); without it the suite packs and installs the package itself.
 */

let work: string;
let bin: string;
let dataDir: string;
let product: EmbeddedProcess;

/** The tarball of sdks/cli (`npm pack`, which bundles it first), installed globally under `work`: the path of its `rsd`. */
async function installedCli(): Promise<string> {
  if (process.env.RSD_CLI_PACKAGE_BIN) return process.env.RSD_CLI_PACKAGE_BIN;
  await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: join(REPO_ROOT, 'sdks/cli') });
  const tarball = (await readdir(work)).find((name) => /^resilience-score-cli-.*\.tgz$/.test(name))!;
  const global = join(work, 'global');
  const offline = ['--offline', '--registry', 'http://127.0.0.1:9/', '--cache', join(work, 'npm-cache'), '--no-audit', '--no-fund'];
  await run('npm', ['install', '--global', '--prefix', global, ...offline, join(work, tarball)], { cwd: work });
  return join(global, 'bin', 'rsd');
}

/** The installed `rsd`, from the directory with no checkout, with only PATH (for node), HOME, XDG_CONFIG_HOME and `env`. */
function rsd(args: string[], env: Record<string, string> = {}, stdin = ''): Promise<CliOutcome> {
  const home = join(work, 'home');
  const child = spawn(bin, args, {
    cwd: join(work, 'elsewhere'),
    env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.end(stdin);
  return new Promise((done) => child.once('close', (code) => done({ code: code ?? -1, stdout, stderr })));
}

/** `--env` output as variables: `export NAME='value'` lines. */
function exported(stdout: string): Record<string, string> {
  return Object.fromEntries([...stdout.matchAll(/^export (\w+)='([^']*)'$/gm)].map((match) => [match[1]!, match[2]!]));
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rsd-cli-package-'));
  await run('mkdir', ['-p', join(work, 'elsewhere'), join(work, 'home')]);
  [bin, { dataDir, product }] = await Promise.all([installedCli(), startEmbeddedOnNewDataDir('rsd-cli-package-data-')]);
}, 180_000);

afterAll(async () => {
  await stopAndRemove(product, dataDir);
  await rm(work, { recursive: true, force: true });
});

describe('@resilience-score/cli installed from its tarball', () => {
  test("when it logs in with the product's development token, then the README's walkthrough runs with the profile", async () => {
    // The product's own token command is the checkout's (npx rsd token), not the package's.
    const token = await runRsd(['token', '--org', ORG], { DATA_DIR: dataDir });
    expect(token.code).toBe(0);
    const { readApi, credentials, scoreIngest, notifier } = product.urls;
    const loggedIn = await rsd(
      [
        'login',
        '--profile',
        'walkthrough',
        '--api-url',
        readApi,
        '--credentials-url',
        credentials,
        '--ingest-url',
        scoreIngest,
        '--notifier-url',
        notifier,
        '--token-stdin',
      ],
      {},
      token.stdout,
    );
    expect(loggedIn).toMatchObject({ code: 0, stdout: '' });
    expect(loggedIn.stderr).not.toContain(token.stdout.trim());
    expect((await stat(join(work, 'home', '.config', 'rsd', 'config.toml'))).mode & 0o777).toBe(0o600);
    const profile = { RSD_PROFILE: 'walkthrough' };

    const created = await rsd(
      [
        'authorizations',
        'create',
        '--org',
        ORG,
        '--recipient-type',
        'insurance_provider',
        '--recipient-name',
        'Example Insurance',
        '--scopes',
        'qr_score,pillar_breakdown,score_trend',
        '--env',
      ],
      profile,
    );
    expect(created.code).toBe(0);
    const { CLIENT_ID: clientId, RSD_API_KEY: apiKey } = exported(created.stdout);
    expect(clientId).toMatch(/\S/);
    const recipient = { ...profile, RSD_API_KEY: apiKey! };

    const score = {
      organizationId: ORG,
      scoreDate: '2026-11-20',
      score: 72,
      grade: 'Strengthen',
      pillarScores: { structuralIntegrity: 70, failureResistance: 75, deviceHealth: 68, recoveryCapability: 77 },
    };
    await writeFile(join(work, 'elsewhere', 'scores.ndjson'), `${JSON.stringify(score)}\n`);
    expect(await rsd(['scores', 'publish', 'scores.ndjson', '--profile', 'walkthrough'])).toMatchObject({
      code: 0,
      stdout: '{\n  "accepted": 1\n}\n',
      stderr: '',
    });

    const read = await eventually(async () => {
      const answer = await rsd(['score', '--client-id', clientId!], recipient);
      return answer.code === 0 ? answer : undefined;
    }, 30_000);
    expect(JSON.parse(read.stdout)).toMatchObject({ clientId, score: 72, grade: 'Strengthen' });
    const pillars = await rsd(['pillars', '--client-id', clientId!, '--verify'], recipient);
    expect(pillars.code).toBe(0);
    expect(pillars.stderr).toMatch(/^rsd: signature verified \(key /);
    expect(await rsd(['history', '--client-id', clientId!, '--from', '2026-01-01', '--limit', '30'], recipient)).toMatchObject({ code: 0 });

    const rotated = await rsd(['authorizations', 'rotate', '--org', ORG, '--client-id', clientId!, '--overlap', '1h', '--env'], profile);
    expect(rotated.code).toBe(0);
    expect(exported(rotated.stdout).RSD_API_KEY).toMatch(/\S/);

    const listed = await rsd(['authorizations', 'list', '--org', ORG, '--output', 'csv'], profile);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\r\n')[0]).toMatch(/^clientId,/);
    expect(listed.stdout).toContain(`${clientId},`);

    const accessLog = await eventually(async () => {
      const answer = await rsd(['authorizations', 'access-log', '--org', ORG, '--client-id', clientId!, '--limit', '20'], profile);
      return answer.code === 0 && (JSON.parse(answer.stdout) as { items: unknown[] }).items.length > 0 ? answer : undefined;
    }, 30_000);
    expect(accessLog.stderr).toBe('');

    // A refusal: exit 1, with the service's code and the request id it answered.
    const refused = await rsd(['authorizations', 'get', '--org', ORG, '--client-id', 'no-such-client'], profile);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^rsd: 404 [A-Z_]+: .*\(request id \S+\)\n$/);
  });

  test("when it is used wrongly or asked for one of the product's own commands, then it exits 2", async () => {
    const usage = await rsd(['authorizations', 'list']);
    expect(usage).toMatchObject({ code: 2, stdout: '' });
    expect(usage.stderr).toMatch(/^rsd: required option '--org <id>' not specified/);
    const productCommand = await rsd(['backup', 'x.tar']);
    expect(productCommand).toMatchObject({ code: 2, stdout: '' });
    expect(productCommand.stderr).toContain('a command of the product, not of this CLI');
  });
});
