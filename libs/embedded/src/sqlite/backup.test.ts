import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { list, type ReadEntry } from 'tar';
import { aStoredWebhook } from '@rsd/testkit';
import { backupDataDirectory, MANIFEST, sha256Of, webhookKeyFingerprint, type BackupManifest } from './backup';
import { openEmbeddedDatabase } from './database';
import { openSqliteWebhookStore } from './sqlite-webhook-store';
import { aBackupPerTest, rowsOf } from '../testing/temp-database';

const KEY = Buffer.alloc(32, 9).toString('base64');

describe('rsd backup: an online copy of every database of a data directory, in one file', () => {
  const files = aBackupPerTest('backup');

  async function entriesOf(file: string): Promise<{ path: string; type: string; mode: number | undefined }[]> {
    const entries: { path: string; type: string; mode: number | undefined }[] = [];
    await list({
      file,
      strict: true,
      onReadEntry: (entry: ReadEntry) => entries.push({ path: entry.path, type: entry.type, mode: entry.mode }),
    });
    return entries;
  }

  it('when the product commits all through the backup, then the copy holds every write acknowledged before it began, whole', async () => {
    const db = openEmbeddedDatabase(join(files.dataDir, 'rsd.sqlite'));
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

    const manifest = await backupDataDirectory({ dataDir: files.dataDir, into: files.backup });
    const during = acknowledged.length;
    writing = false;
    await writer;
    await db.close();

    const copy = join(await files.unpacked(), 'rsd.sqlite');
    const copied = rowsOf(copy, 'SELECT id FROM notes ORDER BY id').map((row) => Number(row.id));
    expect(copied.length).toBeGreaterThanOrEqual(before);
    // A snapshot: a prefix of the writes, with no gap.
    expect(copied).toEqual(acknowledged.slice(0, copied.length));
    expect(during).toBeGreaterThan(before); // the product went on committing while the copy was made
    expect(rowsOf(copy, 'PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
    expect(rowsOf(copy, 'PRAGMA journal_mode')).toEqual([{ journal_mode: 'delete' }]);
    expect(manifest.databases).toEqual([{ file: 'rsd.sqlite', bytes: (await stat(copy)).size, sha256: await sha256Of(copy) }]);
    // Nothing of the staging is left beside it.
    expect((await readdir(files.dir)).sort()).toEqual(['backup.tar', 'data', 'unpacked']);
  });

  it('when the data directory holds other databases, then each is in the backup beside the event log, and the manifest says what it holds', async () => {
    const webhooks = openSqliteWebhookStore({ file: join(files.dataDir, 'rsd.sqlite') });
    await webhooks.addWebhook(aStoredWebhook(), 10);
    await webhooks.addWebhook(aStoredWebhook(), 10);
    await webhooks.close();
    const accessLog = new DatabaseSync(join(files.dataDir, 'access-log.sqlite'));
    accessLog.exec('PRAGMA journal_mode = WAL');
    accessLog.exec("CREATE TABLE access_log (id TEXT PRIMARY KEY); INSERT INTO access_log VALUES ('a1')");
    await writeFile(join(files.dataDir, 'webhook-secret-key'), `${KEY}\n`, { mode: 0o600 });
    await writeFile(join(files.dataDir, 'events.ndjson.imported'), '');

    const manifest = await backupDataDirectory({ dataDir: files.dataDir, into: files.backup });
    accessLog.close();

    // One file: the manifest first, then the databases, each a plain file readable by its owner only.
    expect(await entriesOf(files.backup)).toEqual([
      { path: 'manifest.json', type: 'File', mode: 0o600 },
      { path: 'rsd.sqlite', type: 'File', mode: 0o600 },
      { path: 'access-log.sqlite', type: 'File', mode: 0o600 },
    ]);
    expect((await stat(files.backup)).mode & 0o777).toBe(0o600);
    const dir = await files.unpacked();
    expect((await readdir(dir)).sort()).toEqual(['access-log.sqlite', 'manifest.json', 'rsd.sqlite']);
    expect(JSON.parse(await readFile(join(dir, MANIFEST), 'utf8'))).toEqual(manifest);
    expect(manifest).toEqual<BackupManifest>({
      format: 'rsd-embedded-backup',
      version: 1,
      startedAt: expect.any(String) as string,
      finishedAt: expect.any(String) as string,
      databases: [expect.objectContaining({ file: 'rsd.sqlite' }), expect.objectContaining({ file: 'access-log.sqlite' })],
      webhookSubscriptions: 2,
      webhookKeyFingerprint: webhookKeyFingerprint(KEY),
    });
    expect(rowsOf(join(dir, 'access-log.sqlite'), 'SELECT id FROM access_log')).toEqual([{ id: 'a1' }]);
    // The key is not in the backup, and its fingerprint says nothing of it.
    expect((await readFile(files.backup)).includes(KEY)).toBe(false);
  });

  it('when it is written, then it is a POSIX ustar archive that any tar reads, with no owner of this machine in it', async () => {
    new DatabaseSync(join(files.dataDir, 'rsd.sqlite')).close();

    await backupDataDirectory({ dataDir: files.dataDir, into: files.backup });

    const header = (await readFile(files.backup)).subarray(0, 512);
    expect(header.subarray(0, 14).toString('latin1')).toBe('manifest.json\0');
    expect(header.subarray(156, 157).toString('latin1')).toBe('0'); // a regular file: no pax header before it
    expect(header.subarray(257, 265).toString('latin1')).toBe('ustar\u000000');
    expect(header.subarray(265, 297).toString('latin1').replace(/\0+$/, '')).toBe(''); // no user name
  });

  it('when WEBHOOK_SECRET_KEY is configured, then it is the key recorded, as the product would use it', async () => {
    new DatabaseSync(join(files.dataDir, 'rsd.sqlite')).close();
    await writeFile(join(files.dataDir, 'webhook-secret-key'), Buffer.alloc(32, 1).toString('base64'));

    const manifest = await backupDataDirectory({ dataDir: files.dataDir, into: files.backup, configuredWebhookKey: KEY });

    expect(manifest.webhookKeyFingerprint).toBe(webhookKeyFingerprint(KEY));
  });

  it('when the file is in a directory that does not exist yet, then the directory is made, readable by its owner only', async () => {
    new DatabaseSync(join(files.dataDir, 'rsd.sqlite')).close();
    files.backup = join(files.dir, 'backups', 'rsd-1.tar');

    await backupDataDirectory({ dataDir: files.dataDir, into: files.backup });

    expect(await readdir(join(files.dir, 'backups'))).toEqual(['rsd-1.tar']);
    expect((await stat(join(files.dir, 'backups'))).mode & 0o777).toBe(0o700);
  });

  it('when the directory holds no rsd.sqlite, then nothing is written and it says what is wrong', async () => {
    await expect(backupDataDirectory({ dataDir: files.dataDir, into: files.backup })).rejects.toThrow(
      /holds no rsd\.sqlite: is it the product's data directory/,
    );
    expect(await readdir(files.dir)).toEqual(['data']);
  });

  it.each([
    ['a file', async (path: string) => writeFile(path, 'an earlier backup')],
    ['an empty file', async (path: string) => writeFile(path, '')],
    ['a directory', async (path: string) => mkdir(path)],
  ])('when the target exists (%s), then it is refused and left alone', async (_, make) => {
    new DatabaseSync(join(files.dataDir, 'rsd.sqlite')).close();
    await make(files.backup);
    const before = await stat(files.backup);

    await expect(backupDataDirectory({ dataDir: files.dataDir, into: files.backup })).rejects.toThrow(
      /backup\.tar already exists: a backup is written to a new file, never over another/,
    );
    const after = await stat(files.backup);
    expect([after.size, after.mtimeMs, after.isDirectory()]).toEqual([before.size, before.mtimeMs, before.isDirectory()]);
    if (!after.isDirectory()) expect(await readFile(files.backup, 'utf8')).toBe(before.size > 0 ? 'an earlier backup' : '');
    expect((await readdir(files.dir)).sort()).toEqual(['backup.tar', 'data']);
  });

  it('when a database cannot be copied, then no partial backup is left behind', async () => {
    new DatabaseSync(join(files.dataDir, 'rsd.sqlite')).close();
    await writeFile(join(files.dataDir, 'broken.sqlite'), 'not a database at all, long enough to have a header'.repeat(20));

    await expect(backupDataDirectory({ dataDir: files.dataDir, into: files.backup })).rejects.toThrow(/broken\.sqlite/);
    expect(await readdir(files.dir)).toEqual(['data']);
  });
});
