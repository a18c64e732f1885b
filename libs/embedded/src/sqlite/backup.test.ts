import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { aStoredWebhook } from '@rsd/testkit';
import { backupDataDirectory, MANIFEST, sha256Of, webhookKeyFingerprint, type BackupManifest } from './backup';
import { openEmbeddedDatabase } from './database';
import { openSqliteWebhookStore } from './sqlite-webhook-store';
import { aTempDirectoryPerTest, rowsOf } from '../testing/temp-database';

const KEY = Buffer.alloc(32, 9).toString('base64');

describe('rsd backup: an online copy of every database of a data directory', () => {
  const temp = aTempDirectoryPerTest('backup');
  let dataDir: string;
  let into: string;

  beforeEach(async () => {
    dataDir = join(temp.dir, 'data');
    into = join(temp.dir, 'backup');
    await mkdir(dataDir);
  });

  it('when the product commits all through the backup, then the copy holds every write acknowledged before it began, whole', async () => {
    const db = openEmbeddedDatabase(join(dataDir, 'rsd.sqlite'));
    db.exec('CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
    const acknowledged: number[] = [];
    let writing = true;
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        await db.write(() => db.statement('INSERT INTO notes (id, text) VALUES (?, ?)').run(n, 'x'.repeat(2_000)));
        acknowledged.push(n);
      }
    })();
    while (acknowledged.length < 2_000) await new Promise((done) => setImmediate(done));
    const before = acknowledged.length;

    const manifest = await backupDataDirectory({ dataDir, into });
    const during = acknowledged.length;
    writing = false;
    await writer;
    await db.close();

    const copied = rowsOf(join(into, 'rsd.sqlite'), 'SELECT id FROM notes ORDER BY id').map((row) => Number(row.id));
    expect(copied.length).toBeGreaterThanOrEqual(before);
    // A snapshot: a prefix of the writes, with no gap.
    expect(copied).toEqual(acknowledged.slice(0, copied.length));
    expect(during).toBeGreaterThan(before); // the product went on committing while the copy was made
    expect(rowsOf(join(into, 'rsd.sqlite'), 'PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
    expect(rowsOf(join(into, 'rsd.sqlite'), 'PRAGMA journal_mode')).toEqual([{ journal_mode: 'delete' }]);
    expect(manifest.databases).toEqual([
      { file: 'rsd.sqlite', bytes: (await stat(join(into, 'rsd.sqlite'))).size, sha256: await sha256Of(join(into, 'rsd.sqlite')) },
    ]);
  });

  it('when the data directory holds other databases, then each is in the backup beside the event log, and the manifest says what it holds', async () => {
    const webhooks = openSqliteWebhookStore({ file: join(dataDir, 'rsd.sqlite') });
    await webhooks.addWebhook(aStoredWebhook(), 10);
    await webhooks.addWebhook(aStoredWebhook(), 10);
    await webhooks.close();
    const accessLog = new DatabaseSync(join(dataDir, 'access-log.sqlite'));
    accessLog.exec('PRAGMA journal_mode = WAL');
    accessLog.exec("CREATE TABLE access_log (id TEXT PRIMARY KEY); INSERT INTO access_log VALUES ('a1')");
    await writeFile(join(dataDir, 'webhook-secret-key'), `${KEY}\n`, { mode: 0o600 });
    await writeFile(join(dataDir, 'events.ndjson.imported'), '');

    const manifest = await backupDataDirectory({ dataDir, into });
    accessLog.close();

    expect((await readdir(into)).sort()).toEqual(['access-log.sqlite', 'manifest.json', 'rsd.sqlite']);
    expect(JSON.parse(await readFile(join(into, MANIFEST), 'utf8'))).toEqual(manifest);
    expect(manifest).toEqual<BackupManifest>({
      format: 'rsd-embedded-backup',
      version: 1,
      startedAt: expect.any(String) as string,
      finishedAt: expect.any(String) as string,
      databases: [expect.objectContaining({ file: 'rsd.sqlite' }), expect.objectContaining({ file: 'access-log.sqlite' })],
      webhookSubscriptions: 2,
      webhookKeyFingerprint: webhookKeyFingerprint(KEY),
    });
    expect(rowsOf(join(into, 'access-log.sqlite'), 'SELECT id FROM access_log')).toEqual([{ id: 'a1' }]);
    // The key is not in the backup, and its fingerprint says nothing of it.
    expect(await readFile(join(into, MANIFEST), 'utf8')).not.toContain(KEY);
    for (const name of await readdir(into)) expect((await stat(join(into, name))).mode & 0o777).toBe(0o600);
    expect((await stat(into)).mode & 0o777).toBe(0o700);
  });

  it('when WEBHOOK_SECRET_KEY is configured, then it is the key recorded, as the product would use it', async () => {
    new DatabaseSync(join(dataDir, 'rsd.sqlite')).close();
    await writeFile(join(dataDir, 'webhook-secret-key'), Buffer.alloc(32, 1).toString('base64'));

    const manifest = await backupDataDirectory({ dataDir, into, configuredWebhookKey: KEY });

    expect(manifest.webhookKeyFingerprint).toBe(webhookKeyFingerprint(KEY));
  });

  it('when the directory holds no rsd.sqlite, then nothing is written and it says what is wrong', async () => {
    await expect(backupDataDirectory({ dataDir, into })).rejects.toThrow(/holds no rsd\.sqlite: is it the product's data directory/);
    expect(await readdir(temp.dir)).toEqual(['data']);
  });

  it('when the target is not empty, then the earlier backup is left alone', async () => {
    new DatabaseSync(join(dataDir, 'rsd.sqlite')).close();
    await mkdir(into);
    await writeFile(join(into, 'rsd.sqlite'), 'an earlier backup');

    await expect(backupDataDirectory({ dataDir, into })).rejects.toThrow(/already exists and is not empty/);
    expect(await readFile(join(into, 'rsd.sqlite'), 'utf8')).toBe('an earlier backup');
    expect((await readdir(temp.dir)).sort()).toEqual(['backup', 'data']);
  });

  it('when a database cannot be copied, then no partial backup is left behind', async () => {
    new DatabaseSync(join(dataDir, 'rsd.sqlite')).close();
    await writeFile(join(dataDir, 'broken.sqlite'), 'not a database at all, long enough to have a header'.repeat(20));

    await expect(backupDataDirectory({ dataDir, into })).rejects.toThrow(/broken\.sqlite/);
    expect(await readdir(temp.dir)).toEqual(['data']);
  });
});
