import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import { aScoreSubmission, request } from '@rsd/testkit';
import { eventually, REPO_ROOT, startEmbedded, type EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor } from '../support/embedded-suite';
import * as orgAdmin from '../support/organization-admin';
import { freePort } from '../support/raw-http';
import { npxRsd } from '../support/rsd-cli';

// The restore drill of decision 41, as an operator runs it: `npx rsd backup FILE` while scores and
// authorizations are being written, `npx rsd restore FILE` into a new directory, the product started on
// it. Everything acknowledged before the backup began is served by the restored product, its
// databases pass SQLite's integrity check, a webhook made before the backup still signs its
// deliveries with its secret, and a restore into the directory the product is running on is refused.

const ORGS = ['drill-org-0', 'drill-org-1', 'drill-org-2', 'drill-org-3', 'drill-org-4', 'drill-org-5'];
const ORG = ORGS[0]!;
const WEBHOOK_ORG = 'drill-webhook-org';
const run = promisify(execFile);

let root: string;
let dataDir: string;
let product: EmbeddedProcess | undefined;
let restored: EmbeddedProcess | undefined;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rsd-drill-'));
  dataDir = join(root, 'data');
  // Receivers on loopback, so the development flag of decision 28.
  product = await startEmbedded({ DATA_DIR: dataDir, LOG_LEVEL: 'info', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
}, 90_000);

afterAll(async () => {
  await product?.stop();
  await restored?.stop();
  await rm(root, { recursive: true, force: true });
});

const rsd = npxRsd;

function post<T>(url: string, headers: Record<string, string>, body: object) {
  return request<T>(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const createAuthorization = (urls: EmbeddedProcess['urls'], token: string, org: string, scopes: string[]) =>
  orgAdmin.createAuthorization(urls.credentials, org, token, { recipientType: 'auditor', scopes });

function integrityOf(file: string): unknown[] {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return db.prepare('PRAGMA integrity_check').all();
  } finally {
    db.close();
  }
}

/** Polls until nothing is missing, or the bound passes: then the last answer, for the assertion to show. */
async function untilNoneMissing(missing: () => string[] | Promise<string[]>, timeoutMs = 30_000): Promise<string[]> {
  let left: string[] = [];
  await eventually(async () => ((left = await missing()).length === 0 ? true : undefined), timeoutMs, 200).catch(() => undefined);
  return left;
}

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

describe('backup and restore of the embedded runtime: the drill', () => {
  test('when creates and ingests run through rsd backup, then the restored product holds everything acknowledged before it began, and serves', async () => {
    const running = product!;
    const tokens = new Map<string, string>();
    const readers = new Map<string, { clientId: string; apiKey: string }>();
    for (const org of ORGS) {
      tokens.set(org, await devTokenFor(dataDir, org));
      readers.set(org, await createAuthorization(running.urls, tokens.get(org)!, org, ['qr_score', 'score_trend']));
    }
    const token = tokens.get(ORG)!;
    const reader = readers.get(ORG)!;
    // A subscription made before the backup; its receiver listens only once the restored product runs.
    const hookOwner = await createAuthorization(running.urls, await devTokenFor(dataDir, WEBHOOK_ORG), WEBHOOK_ORG, ['qr_score']);
    const port = await freePort();
    const webhook = await post<{ id: string; secret: string }>(
      `${running.urls.notifier}/v1/customers/${hookOwner.clientId}/webhooks`,
      { 'x-api-key': hookOwner.apiKey },
      { url: `http://127.0.0.1:${port}/hooks`, events: ['score.updated'] },
    );
    expect(webhook.status).toBe(201);

    // Six writers of scores (a date of an organization each) and two of authorizations, paced so that they run
    // all through the backup; what was refused counts for nothing.
    // Each with the moment its acknowledgement arrived, after its commit.
    const acknowledgedScores: { score: string; at: number }[] = [];
    const acknowledgedClientIds: { clientId: string; at: number }[] = [];
    let next = 0;
    let writing = true;
    const scoreWriter = async () => {
      while (writing && next < ORGS.length * 360) {
        const n = next++;
        const org = ORGS[n % ORGS.length]!;
        const scoreDate = daysAgo(1 + Math.floor(n / ORGS.length));
        const answer = await post(
          `${running.urls.scoreIngest}/v1/scores`,
          { authorization: `Bearer ${tokens.get(org)!}` },
          aScoreSubmission({ organizationId: org, scoreDate }),
        ).catch(() => undefined);
        if (answer?.status === 202) acknowledgedScores.push({ score: `${org} ${scoreDate}`, at: Date.now() });
        // Fixed on purpose: the writer's pace (writes keep arriving all through the backup), not a wait for anything.
        await new Promise((done) => setTimeout(done, 5));
      }
    };
    const authorizationWriter = async () => {
      while (writing) {
        const answer = await post<{ clientId: string }>(
          `${running.urls.credentials}/v1/organizations/${ORG}/authorizations`,
          { authorization: `Bearer ${token}` },
          { recipientType: 'partner', scopes: ['qr_score'] },
        ).catch(() => undefined);
        if (answer?.status === 201) acknowledgedClientIds.push({ clientId: answer.body.clientId, at: Date.now() });
      }
    };
    const writers = [...Array.from({ length: 6 }, scoreWriter), authorizationWriter(), authorizationWriter()];
    const acknowledged = () => acknowledgedScores.length + acknowledgedClientIds.length;
    await eventually(
      () => Promise.resolve(acknowledgedScores.length >= 40 && acknowledgedClientIds.length >= 8 ? true : undefined),
      60_000,
      10,
    );

    const backupFile = join(root, 'backups', 'rsd-1.tar');
    const backedUp = await rsd(['backup', backupFile], { DATA_DIR: dataDir });
    // The writes went on past the end of the backup, so they ran all through it.
    const atEnd = acknowledged();
    const wentOn = await untilNoneMissing(() => (acknowledged() > atEnd + 10 ? [] : ['writes after the backup']), 10_000);
    writing = false;
    await Promise.all(writers);

    expect(backedUp).toMatchObject({ code: 0 });
    expect(backedUp.stderr).toMatch(/the keys are not in the backup.*webhook-secret-key/);
    expect(wentOn).toEqual([]);
    const manifest = JSON.parse(backedUp.stdout) as { startedAt: string; databases: { file: string }[]; webhookSubscriptions: number };
    // Acknowledged before the backup began: before the moment it noted just before its first copy.
    const began = Date.parse(manifest.startedAt);
    const scoresBefore = acknowledgedScores.filter(({ at }) => at < began).map(({ score }) => score);
    const clientIdsBefore = acknowledgedClientIds.filter(({ at }) => at < began).map(({ clientId }) => clientId);
    expect(scoresBefore.length).toBeLessThan(acknowledgedScores.length);
    const databases = (await readdir(dataDir)).filter((name) => name.endsWith('.sqlite')).sort();
    expect(manifest.databases.map((database) => database.file).sort()).toEqual(databases);
    expect(manifest.webhookSubscriptions).toBe(1);
    // One file, readable by its owner only, and nothing else beside it (the staging is gone).
    expect((await stat(backupFile)).mode & 0o777).toBe(0o600);
    expect(await readdir(join(root, 'backups'))).toEqual(['rsd-1.tar']);
    // A second backup under the same name is refused, and the first is left as it was.
    const first = await readFile(backupFile);
    const again = await rsd(['backup', backupFile], { DATA_DIR: dataDir });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/rsd-1\.tar already exists: a backup is written to a new file, never over another/);
    expect((await readFile(backupFile)).equals(first)).toBe(true);

    // Into the directory the product runs on: refused, even with --force, and the product goes on serving.
    for (const force of [[], ['--force']]) {
      const refused = await rsd(['restore', backupFile, '--data-dir', dataDir, ...force]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/is in use: a process \(the product, or a rebuild of its views\) has .*rsd\.sqlite.* open/);
    }
    const stillServing = await request(`${running.urls.readApi}/v1/customers/${reader.clientId}/score`, {
      headers: { 'x-api-key': reader.apiKey },
    });
    expect(stillServing.status).toBe(200);

    // Into a new directory without the webhook key: refused, nothing made.
    const restoredDir = join(root, 'restored');
    const withoutKey = await rsd(['restore', backupFile, '--data-dir', restoredDir]);
    expect(withoutKey.code).toBe(1);
    expect(withoutKey.stderr).toMatch(/holds 1 webhook subscription\(s\).*Copy the backed-up product's webhook-secret-key/);
    await expect(stat(restoredDir)).rejects.toThrow(/ENOENT/);

    // With the webhook key but not the subjects' keys, which no backup carries either (decision 56: an erasure destroys a
    // key, and a backup must not bring it back): refused, or the restored product could not open what its views had not
    // read of the log when the backup was made.
    await mkdir(restoredDir, { mode: 0o700 });
    await copyFile(join(dataDir, 'webhook-secret-key'), join(restoredDir, 'webhook-secret-key'));
    const withoutSubjectKeys = await rsd(['restore', backupFile, '--data-dir', restoredDir]);
    expect(withoutSubjectKeys.code).toBe(1);
    expect(withoutSubjectKeys.stderr).toMatch(/values sealed for \d+ data subject\(s\).*The master key is neither in/);

    // With the keys the operator kept apart (the master key among them) and the product's current key store, copied in
    // while the product serves: restored, and checked.
    await copyFile(join(dataDir, 'subject-keys-master.key'), join(restoredDir, 'subject-keys-master.key'));
    const keyStore = ['--subject-keys', join(dataDir, 'subject-keys.db')];
    const restoredAnswer = await rsd(['restore', backupFile, '--data-dir', restoredDir, ...keyStore]);
    expect(restoredAnswer).toMatchObject({ code: 0 });
    expect(JSON.parse(restoredAnswer.stdout)).toMatchObject({
      databases: expect.arrayContaining(databases) as string[],
      webhookKey: 'matches',
      subjectKeys: 'opens',
    });
    for (const file of databases) expect(integrityOf(join(restoredDir, file))).toEqual([{ integrity_check: 'ok' }]);
    expect((await readdir(root)).filter((name) => name.startsWith('.'))).toEqual([]); // no staging left beside it

    // The file unpacked by the system's tar is the directory an earlier version wrote, and that restores too.
    const earlierForm = join(root, 'earlier-form');
    await mkdir(earlierForm, { mode: 0o700 });
    await run('tar', ['-xf', backupFile, '-C', earlierForm]);
    const fromDirectory = join(root, 'restored-from-directory');
    await mkdir(fromDirectory, { mode: 0o700 });
    for (const key of ['webhook-secret-key', 'subject-keys-master.key']) await copyFile(join(dataDir, key), join(fromDirectory, key));
    expect(await rsd(['restore', earlierForm, '--data-dir', fromDirectory, ...keyStore])).toMatchObject({ code: 0 });
    for (const file of databases) expect(integrityOf(join(fromDirectory, file))).toEqual([{ integrity_check: 'ok' }]);

    await product?.stop();
    product = undefined;
    restored = await startEmbedded({ DATA_DIR: restoredDir, LOG_LEVEL: 'info', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    const { urls } = restored;
    expect(integrityOf(join(restoredDir, 'rsd.sqlite'))).toEqual([{ integrity_check: 'ok' }]);

    // Every authorization acknowledged before the backup began, listed; every score, read with the keys made before it.
    const restoredToken = await devTokenFor(restoredDir, ORG);
    const missingClientIds = await untilNoneMissing(async () => {
      const listed = await request<{ authorizations: { clientId: string }[] }>(
        `${urls.credentials}/v1/organizations/${ORG}/authorizations`,
        {
          headers: { authorization: `Bearer ${restoredToken}` },
        },
      );
      const clientIds = new Set((listed.body.authorizations ?? []).map((authorization) => authorization.clientId));
      return [reader.clientId, ...clientIdsBefore].filter((clientId) => !clientIds.has(clientId));
    });
    expect(missingClientIds).toEqual([]);
    const missingScores = await untilNoneMissing(async () => {
      const stored = new Set<string>();
      for (const [org, { clientId, apiKey }] of readers) {
        const history = await request<{ scores?: { scoreDate: string }[] }>(
          `${urls.readApi}/v1/customers/${clientId}/score/history?limit=366&from=${daysAgo(400)}`,
          { headers: { 'x-api-key': apiKey } },
        );
        for (const item of history.body.scores ?? []) stored.add(`${org} ${item.scoreDate}`);
      }
      return scoresBefore.filter((score) => !stored.has(score));
    });
    expect(missingScores).toEqual([]);

    // The webhook's secret opens under the restored product: its delivery of a new score verifies with the secret given at creation.
    const listener = spawn(process.execPath, [join(REPO_ROOT, 'tools/cli/bin/rsd.js'), 'webhooks', 'listen', '--port', String(port)], {
      env: { ...process.env, RSD_WEBHOOK_SECRET: webhook.body.secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let received = '';
      let listening = '';
      listener.stdout.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
      listener.stderr.on('data', (chunk: Buffer) => (listening += chunk.toString('utf8')));
      await untilNoneMissing(() => (listening.includes(String(port)) ? [] : ['listening']), 10_000);
      const scored = await post(
        `${urls.scoreIngest}/v1/scores`,
        { authorization: `Bearer ${await devTokenFor(restoredDir, WEBHOOK_ORG)}` },
        aScoreSubmission({ organizationId: WEBHOOK_ORG, scoreDate: daysAgo(0), score: 77 }),
      );
      expect(scored.status).toBe(202);
      const delivered = await untilNoneMissing(() => (received.includes('"type":"score.updated"') ? [] : ['a delivery']), 20_000);
      expect(delivered).toEqual([]);
      const delivery = received
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { verified: boolean; type: string; data: { clientId: string; score: number } })
        .find((entry) => entry.type === 'score.updated');
      expect(delivery).toMatchObject({ verified: true, data: { clientId: hookOwner.clientId, score: 77 } });
    } finally {
      const exited = new Promise((resolve) => listener.once('exit', resolve));
      listener.kill('SIGTERM');
      await exited;
    }
    expect(restored.output()).not.toMatch(/cannot open the webhook secret/);
  }, 240_000);
});
