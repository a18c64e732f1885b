import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { aScoreSubmission } from '@rsd/testkit';
import { rsdCreateArgs, runRsd, type EmbeddedProcess } from '../support/embedded-process';
import { startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';

const ORG = 'cli-org';

let dataDir: string;
let product: EmbeddedProcess;

/** Runs the real `rsd` bin as a user would; never throws, returns the exit code and both streams. */
function rsd(args: string[], env: Record<string, string> = {}) {
  const { readApi, credentials, scoreIngest } = product.urls;
  return runRsd(args, { DATA_DIR: dataDir, RSD_API_URL: readApi, RSD_CREDENTIALS_URL: credentials, RSD_INGEST_URL: scoreIngest, ...env });
}

beforeAll(async () => {
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-cli-'));
}, 90_000);

afterAll(() => stopAndRemove(product, dataDir));

describe('the rsd CLI against the embedded runtime', () => {
  test('when a user creates, publishes, reads and revokes with the CLI, then every step works', async () => {
    const created = await rsd(rsdCreateArgs(ORG, 'auditor', 'qr_score,pillar_breakdown'));
    expect(created.code).toBe(0);
    const { clientId, apiKey } = JSON.parse(created.stdout) as { clientId: string; apiKey: string };

    const file = join(dataDir, 'scores.ndjson');
    const today = new Date().toISOString().slice(0, 10);
    await writeFile(
      file,
      [
        aScoreSubmission({ organizationId: ORG, scoreDate: '2026-01-01', score: 40, grade: 'Improve' }),
        aScoreSubmission({ organizationId: ORG, scoreDate: today, score: 90, grade: 'Sustain' }),
      ]
        .map((score) => JSON.stringify(score))
        .join('\n'),
    );
    const published = await rsd(['scores', 'publish', file]);
    expect(published.code).toBe(0);
    expect(JSON.parse(published.stdout)).toEqual({ accepted: 2 });

    const score = await rsd(['score', '--client-id', clientId], { RSD_API_KEY: apiKey });
    expect(score.code).toBe(0);
    expect(JSON.parse(score.stdout)).toEqual({ clientId, scoreDate: today, score: 90, grade: 'Sustain' });

    const pillars = await rsd(['pillars', '--client-id', clientId], { RSD_API_KEY: apiKey });
    expect(JSON.parse(pillars.stdout).scoreDate).toBe(today);

    const revoked = await rsd(['authorizations', 'revoke', '--org', ORG, '--client-id', clientId]);
    expect(JSON.parse(revoked.stdout).status).toBe('revoked');

    const refused = await rsd(['score', '--client-id', clientId], { RSD_API_KEY: apiKey });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('401 CREDENTIAL_INACTIVE');
  });

  test('when a key is rotated with the CLI, then the new key and the previous one both read during the overlap; an allow list holds', async () => {
    const created = await rsd(['authorizations', 'create', '--org', ORG, '--recipient-type', 'partner', '--scopes', 'qr_score']);
    const { clientId, apiKey } = JSON.parse(created.stdout) as { clientId: string; apiKey: string };
    const file = join(dataDir, 'rotation-score.json');
    await writeFile(file, JSON.stringify(aScoreSubmission({ organizationId: ORG, scoreDate: '2026-02-01' })));
    expect((await rsd(['scores', 'publish', file])).code).toBe(0);

    const rotated = await rsd(['authorizations', 'rotate', '--org', ORG, '--client-id', clientId, '--overlap', '1h']);
    expect(rotated.code).toBe(0);
    const record = JSON.parse(rotated.stdout) as { apiKey: string; previousKeyExpiresAt: string };
    expect(Date.parse(record.previousKeyExpiresAt) - Date.now()).toBeGreaterThan(3_500_000);

    expect((await rsd(['score', '--client-id', clientId], { RSD_API_KEY: record.apiKey })).code).toBe(0);
    expect((await rsd(['score', '--client-id', clientId], { RSD_API_KEY: apiKey })).code).toBe(0);

    const noOverlap = await rsd(['authorizations', 'rotate', '--org', ORG, '--client-id', clientId, '--overlap', '0']);
    const newest = (JSON.parse(noOverlap.stdout) as { apiKey: string }).apiKey;
    const refused = await rsd(['score', '--client-id', clientId], { RSD_API_KEY: record.apiKey });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('401 INVALID_API_KEY');
    expect((await rsd(['score', '--client-id', clientId], { RSD_API_KEY: newest })).code).toBe(0);

    const elsewhere = await rsd(rsdCreateArgs(ORG, 'partner', 'qr_score', '--allowed-cidrs', '203.0.113.0/24'));
    const distant = JSON.parse(elsewhere.stdout) as { clientId: string; apiKey: string; allowedCidrs: string[] };
    expect(distant.allowedCidrs).toEqual(['203.0.113.0/24']);
    const fromHere = await rsd(['score', '--client-id', distant.clientId], { RSD_API_KEY: distant.apiKey });
    expect(fromHere.code).toBe(1);
    expect(fromHere.stderr).toContain('403 ADDRESS_NOT_ALLOWED');

    const badOverlap = await rsd(['authorizations', 'rotate', '--org', ORG, '--client-id', clientId, '--overlap', 'soon']);
    expect(badOverlap.code).toBe(2);
  });

  test('when a file has an invalid score, then the CLI shows the per-item problem and exits 1', async () => {
    const file = join(dataDir, 'bad.json');
    await writeFile(
      file,
      JSON.stringify([aScoreSubmission({ organizationId: ORG }), { ...aScoreSubmission({ organizationId: ORG }), grade: 'Excellent' }]),
    );
    const answer = await rsd(['scores', 'publish', file]);
    expect(answer.code).toBe(1);
    expect(answer.stderr).toContain('400 VALIDATION_FAILED');
    expect(answer.stderr).toContain('[1] scores.1.grade');
  });

  test('when the CLI is called wrongly, then it says what is missing and exits 2', async () => {
    expect((await rsd(['authorizations', 'create', '--org', ORG])).code).toBe(2);
    expect((await rsd(['--no-such-flag'])).code).toBe(2);
    const noKey = await rsd(['score', '--client-id', 'rs_0123456789abcdef0123']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('RSD_API_KEY');
  });

  test('when a token is minted, then it is a JWT the services accept', async () => {
    const token = await rsd(['token', '--org', ORG]);
    expect(token.code).toBe(0);
    const listed = await rsd(['authorizations', 'list', '--org', ORG], { RSD_TOKEN: token.stdout.trim(), DATA_DIR: '/nonexistent' });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).authorizations.length).toBeGreaterThanOrEqual(1);
  });
});
