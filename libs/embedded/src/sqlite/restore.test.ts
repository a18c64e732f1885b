import { copyFile, mkdir, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { create, Header } from 'tar';
import { aStoredWebhook } from '@rsd/testkit';
import { backupDataDirectory, MANIFEST, sha256Of } from './backup';
import { openEmbeddedDatabase } from './database';
import { openSqliteWebhookStore } from './sqlite-webhook-store';
import { databasesInUse, restoreDataDirectory } from './restore';
import { openSqliteSubjectKeyStore } from './sqlite-subject-key-store';
import { aSealedDataDirectory, TEST_SUBJECT_KEYS_MASTER_KEY } from '../testing/sealed-data-directory';
import { aBackupPerTest, rowsOf } from '../testing/temp-database';

const KEY = Buffer.alloc(32, 9).toString('base64');
const OTHER_KEY = Buffer.alloc(32, 3).toString('base64');

describe('rsd restore: a backup put in place, never over a directory in use', () => {
  const files = aBackupPerTest('restore');
  let target: string;

  beforeEach(() => {
    target = join(files.dir, 'target');
  });

  /** The backup file made again from a directory (after a test changed what is in it), as rsd backup packs it. */
  async function repack(dir: string): Promise<void> {
    await rm(files.backup);
    await create({ cwd: dir, file: files.backup, portable: true }, await readdir(dir));
  }

  /** What the directories beside the target hold: a restore leaves no staging directory behind. */
  const besideTarget = async () => (await readdir(files.dir)).filter((name) => name.startsWith('.')).sort();

  async function aBackupOf(notes: string[], options: { webhooks?: number; accessLog?: boolean } = {}): Promise<void> {
    const db = openEmbeddedDatabase(join(files.dataDir, 'rsd.sqlite'));
    db.exec('CREATE TABLE IF NOT EXISTS notes (text TEXT NOT NULL)');
    for (const note of notes) await db.write(() => db.statement('INSERT INTO notes (text) VALUES (?)').run(note));
    await db.close();
    if (options.webhooks) {
      const store = openSqliteWebhookStore({ file: join(files.dataDir, 'rsd.sqlite') });
      for (let i = 0; i < options.webhooks; i++) await store.addWebhook(aStoredWebhook(), 10);
      await store.close();
      await writeFile(join(files.dataDir, 'webhook-secret-key'), `${KEY}\n`, { mode: 0o600 });
    }
    if (options.accessLog) {
      const accessLog = new DatabaseSync(join(files.dataDir, 'access-log.sqlite'));
      accessLog.exec("CREATE TABLE access_log (id TEXT); INSERT INTO access_log VALUES ('a1')");
      accessLog.close();
    }
    await backupDataDirectory({ dataDir: files.dataDir, into: files.backup });
  }

  /** The report of a backup with both databases, no webhook and no sealed event, restored into the target. */
  const restoredWithNoKeyNeeded = () => ({
    dataDir: target,
    databases: ['rsd.sqlite', 'access-log.sqlite'],
    webhookKey: 'not needed',
    subjectKeys: 'not needed',
  });

  const notesIn = (dir: string): string[] => rowsOf(join(dir, 'rsd.sqlite'), 'SELECT text FROM notes').map((row) => String(row.text));

  it('when the directory is new, then every database of the backup is in it, whole, and only readable by its owner', async () => {
    await aBackupOf(['a', 'b'], { accessLog: true });

    const report = await restoreDataDirectory({ from: files.backup, dataDir: target });

    expect(report).toEqual(restoredWithNoKeyNeeded());
    expect(notesIn(target)).toEqual(['a', 'b']);
    expect((await readdir(target)).sort()).toEqual(['access-log.sqlite', 'rsd.sqlite']);
    expect((await stat(join(target, 'rsd.sqlite'))).mode & 0o777).toBe(0o600);
    expect((await stat(target)).mode & 0o777).toBe(0o700);
    // The product opens it as it opens its own.
    const db = openEmbeddedDatabase(join(target, 'rsd.sqlite'));
    await db.write(() => db.statement('INSERT INTO notes (text) VALUES (?)').run('c'));
    await db.close();
    expect(notesIn(target)).toEqual(['a', 'b', 'c']);
  });

  it('when a process has the directory’s database open, then the restore is refused and nothing changes, even with --force', async () => {
    await aBackupOf(['backed up']);
    await mkdir(target);
    const running = openEmbeddedDatabase(join(target, 'rsd.sqlite'));
    running.exec('CREATE TABLE IF NOT EXISTS notes (text TEXT NOT NULL)');
    await running.write(() => running.statement('INSERT INTO notes (text) VALUES (?)').run('serving'));

    await expect(restoreDataDirectory({ from: files.backup, dataDir: target, force: true })).rejects.toThrow(
      /is in use: a process \(the product, or a rebuild of its views\) has rsd\.sqlite open/,
    );
    expect(await databasesInUse(target)).toEqual(['rsd.sqlite']);
    // The running product is not disturbed: it goes on writing.
    await running.write(() => running.statement('INSERT INTO notes (text) VALUES (?)').run('still serving'));
    expect(notesIn(target)).toEqual(['serving', 'still serving']);
    await running.close();
    expect(await databasesInUse(target)).toEqual([]);
  });

  it('when the directory holds a database and --force is not given, then it is refused; with --force the old one is moved aside, journals included', async () => {
    await aBackupOf(['backed up']);
    await mkdir(target);
    const old = new DatabaseSync(join(target, 'rsd.sqlite'));
    old.exec("CREATE TABLE notes (text TEXT NOT NULL); INSERT INTO notes VALUES ('old')");
    old.close();
    await writeFile(join(target, 'events.ndjson'), '');
    // A journal left without its database (a crash, a hand copy): beside the restored one it would be replayed into it.
    await writeFile(join(target, 'access-log.sqlite-wal'), 'a stale log');
    await writeFile(join(target, 'dev-jwt-secret'), 'kept\n');

    await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
      /already holds data \((?=.*rsd\.sqlite)(?=.*events\.ndjson)(?=.*access-log\.sqlite-wal).*\)\. Pass --force/,
    );
    expect(notesIn(target)).toEqual(['old']);

    const report = await restoreDataDirectory({
      from: files.backup,
      dataDir: target,
      force: true,
      now: () => new Date('2026-11-25T10:00:00Z'),
    });

    expect(report.replacedInto).toBe(join(target, 'replaced-2026-11-25T10-00-00-000Z'));
    expect((await readdir(report.replacedInto!)).sort()).toEqual(['access-log.sqlite-wal', 'events.ndjson', 'rsd.sqlite']);
    expect(notesIn(report.replacedInto!)).toEqual(['old']);
    expect(notesIn(target)).toEqual(['backed up']);
    expect(await readFile(join(target, 'dev-jwt-secret'), 'utf8')).toBe('kept\n');
  });

  it('when a file of the backup was changed or cut, then nothing is restored', async () => {
    await aBackupOf(['a']);
    const dir = await files.unpacked();
    const file = join(dir, 'rsd.sqlite');
    const bytes = await readFile(file);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 10) ^ 0xff, bytes.length - 10);
    await writeFile(file, bytes);
    await repack(dir);

    await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
      /rsd\.sqlite in .*backup\.tar is not the file that was backed up \(its size or SHA-256 differs from manifest\.json\)/,
    );
    await expect(stat(target)).rejects.toThrow(/ENOENT/);
    expect(await besideTarget()).toEqual([]);
  });

  it('when a backed-up database fails the integrity check, then nothing is restored', async () => {
    await aBackupOf(['a']);
    // A file damaged before it was backed up, with a manifest that describes it: only the check finds it.
    const dir = await files.unpacked();
    const damaged = join(dir, 'rsd.sqlite');
    const bytes = await readFile(damaged);
    const pageSize = bytes.readUInt16BE(16);
    bytes.fill(0x41, pageSize + 8, pageSize * 2);
    await writeFile(damaged, bytes);
    const manifest = JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as { databases: { sha256: string }[] };
    manifest.databases[0]!.sha256 = await sha256Of(damaged);
    await writeFile(join(dir, MANIFEST), JSON.stringify(manifest));
    await repack(dir);

    await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
      /rsd\.sqlite in .*backup\.tar fails SQLite's integrity check/,
    );
    await expect(stat(target)).rejects.toThrow(/ENOENT/);
  });

  it('when the path is not a backup, then it says so', async () => {
    await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
      /backup\.tar does not exist: no backup to restore/,
    );
    const dir = join(files.dir, 'not-a-backup');
    await mkdir(dir);
    await expect(restoreDataDirectory({ from: dir, dataDir: target })).rejects.toThrow(
      /is not a backup made by rsd backup \(no manifest\.json/,
    );
    await writeFile(
      join(dir, MANIFEST),
      JSON.stringify({ format: 'rsd-embedded-backup', version: 1, databases: [{ file: '../x.sqlite' }] }),
    );
    await expect(restoreDataDirectory({ from: dir, dataDir: target })).rejects.toThrow(/does not list its databases/);
    await create({ cwd: dir, file: files.backup }, [MANIFEST]);
    await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
      /manifest\.json in .*backup\.tar does not list its databases/,
    );
    await expect(stat(target)).rejects.toThrow(/ENOENT/);
    expect(await besideTarget()).toEqual([]);
  });

  it('when the backup is a directory made by the earlier version (or the file unpacked), then it restores as the file does', async () => {
    await aBackupOf(['a', 'b'], { accessLog: true });
    const earlier = await files.unpacked();
    await rm(files.backup);

    const report = await restoreDataDirectory({ from: earlier, dataDir: target });

    expect(report).toEqual(restoredWithNoKeyNeeded());
    expect(notesIn(target)).toEqual(['a', 'b']);
    // The earlier form's refusals name the directory's files, as they did.
    await writeFile(join(earlier, 'rsd.sqlite'), 'changed');
    await expect(restoreDataDirectory({ from: earlier, dataDir: join(files.dir, 'other') })).rejects.toThrow(
      new RegExp(`${join(earlier, 'rsd.sqlite')} is not the file that was backed up`),
    );
  });

  describe('the backup file, unpacked beside the data directory before anything is checked', () => {
    /** A tar archive of these entries, written block by block with node-tar's own headers: what rsd backup would never write. */
    async function anArchiveOf(entries: { path: string; type?: 'File' | 'SymbolicLink'; body?: Buffer | string; linkpath?: string }[]) {
      const blocks: Buffer[] = [];
      for (const entry of entries) {
        const body = Buffer.from(entry.body ?? '');
        const header = Buffer.alloc(512);
        new Header({
          path: entry.path,
          type: entry.type ?? 'File',
          size: entry.type === 'SymbolicLink' ? 0 : body.length,
          mode: 0o600,
          mtime: new Date(),
          ...(entry.linkpath ? { linkpath: entry.linkpath } : {}),
        }).encode(header, 0);
        blocks.push(header);
        if (entry.type !== 'SymbolicLink' && body.length > 0) blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
      }
      blocks.push(Buffer.alloc(1024));
      await writeFile(files.backup, Buffer.concat(blocks));
    }

    async function theBackupsEntries(): Promise<{ path: string; body: Buffer }[]> {
      const dir = await files.unpacked();
      return Promise.all((await readdir(dir)).map(async (path) => ({ path, body: await readFile(join(dir, path)) })));
    }

    it.each([
      ['a path that climbs out', '../escaped.sqlite', /"\.\.\/escaped\.sqlite" \(a path out of the backup \(\.\.\)\)/],
      ['a path that climbs out further in', 'sub/../../escaped.sqlite', /"sub\/\.\.\/\.\.\/escaped\.sqlite" \(a path out of the backup/],
      ['an absolute path', 'ABSOLUTE', /\(an absolute path\)/],
    ])('when it holds %s, then it is refused and nothing is written outside', async (_, path, message) => {
      await aBackupOf(['a']);
      const entries = await theBackupsEntries();
      const outside = join(files.dir, 'escaped.sqlite');
      const entryPath = path === 'ABSOLUTE' ? outside : path;
      await mkdir(join(files.dir, 'sub'));
      await anArchiveOf([...entries, { path: entryPath, body: 'not yours' }]);

      await expect(restoreDataDirectory({ from: files.backup, dataDir: join(files.dir, 'sub', 'target') })).rejects.toThrow(message);
      await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
        /backup\.tar is not a backup made by rsd backup: it holds an entry a backup never holds/,
      );
      await expect(stat(outside)).rejects.toThrow(/ENOENT/);
      await expect(stat(join(files.dir, 'sub', 'escaped.sqlite'))).rejects.toThrow(/ENOENT/);
      await expect(stat(target)).rejects.toThrow(/ENOENT/);
      expect(await besideTarget()).toEqual([]);
      expect(await readdir(join(files.dir, 'sub'))).toEqual([]);
    });

    it('when it holds a link, then it is refused', async () => {
      await aBackupOf(['a']);
      await anArchiveOf([{ path: 'rsd.sqlite', type: 'SymbolicLink', linkpath: '/etc/passwd' }, ...(await theBackupsEntries())]);

      await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
        /"rsd\.sqlite" \(a SymbolicLink, not a file or directory\)/,
      );
      await expect(stat(target)).rejects.toThrow(/ENOENT/);
      expect(await besideTarget()).toEqual([]);
    });

    it('when it was cut short, then it is refused, saying the backup is damaged or cut short', async () => {
      await aBackupOf(['a'.repeat(1_000), 'b'.repeat(1_000)]);
      await truncate(files.backup, (await stat(files.backup)).size - 1_500);

      await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
        /backup\.tar is not a whole backup: it cannot be read as a tar archive \(.*\); the backup is damaged or cut short/,
      );
      await expect(stat(target)).rejects.toThrow(/ENOENT/);
      expect(await besideTarget()).toEqual([]);
    });

    it('when it is not an archive, or a header is damaged, then it is refused', async () => {
      await aBackupOf(['a']);
      const bytes = await readFile(files.backup);
      bytes.writeUInt8(bytes.readUInt8(5) ^ 0x20, 5); // the manifest's name in its header: the header's checksum no longer matches
      await writeFile(files.backup, bytes);
      await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
        /is not a whole backup: it cannot be read as a tar archive/,
      );

      await writeFile(files.backup, 'x'.repeat(5_000));
      await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
        /is not a whole backup: it cannot be read as a tar archive/,
      );
      await expect(stat(target)).rejects.toThrow(/ENOENT/);
      expect(await besideTarget()).toEqual([]);
    });
  });

  describe('the webhook key, which seals the subscriptions’ secrets and is not in the backup', () => {
    it('when the backup holds subscriptions and the key is not there, then it is refused, saying which key and where', async () => {
      await aBackupOf(['a'], { webhooks: 2 });

      await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
        /holds 2 webhook subscription\(s\).*neither in .*webhook-secret-key nor in WEBHOOK_SECRET_KEY.*Copy the backed-up product's webhook-secret-key/,
      );
      await expect(stat(target)).rejects.toThrow(/ENOENT/);
    });

    it('when another key is there, then it is refused', async () => {
      await aBackupOf(['a'], { webhooks: 1 });
      await mkdir(target);
      await writeFile(join(target, 'webhook-secret-key'), OTHER_KEY);

      await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(/is not the one that sealed them/);
      await expect(restoreDataDirectory({ from: files.backup, dataDir: target, configuredWebhookKey: OTHER_KEY })).rejects.toThrow(
        /The key in WEBHOOK_SECRET_KEY is not the one/,
      );
    });

    it('when the same key is in the directory or configured, then it restores, and says the key matches', async () => {
      await aBackupOf(['a'], { webhooks: 1 });
      await mkdir(target);
      await writeFile(join(target, 'webhook-secret-key'), `${KEY}\n`, { mode: 0o600 });

      expect((await restoreDataDirectory({ from: files.backup, dataDir: target })).webhookKey).toBe('matches');
      const elsewhere = join(files.dir, 'elsewhere');
      expect((await restoreDataDirectory({ from: files.backup, dataDir: elsewhere, configuredWebhookKey: KEY })).webhookKey).toBe(
        'matches',
      );
    });

    it('when the key is lost and the operator says so, then it restores without it', async () => {
      await aBackupOf(['a'], { webhooks: 1 });

      expect((await restoreDataDirectory({ from: files.backup, dataDir: target, withoutWebhookKey: true })).webhookKey).toBe('missing');
      expect(notesIn(target)).toEqual(['a']);
    });
  });
  describe('the subjects’ keys, which open the sealed events and are not in the backup', () => {
    /** A product's data directory whose log holds values sealed for two organizations, backed up; its key store and master key stay behind. */
    async function aSealedBackup(): Promise<{ keyStore: string; masterKeyFile: string }> {
      const product = await aSealedDataDirectory(files.dataDir, ['org-a', 'org-b']);
      await backupDataDirectory({ dataDir: files.dataDir, into: files.backup });
      return product;
    }

    it('when the directory has neither the master key nor the key store, then it is refused, saying what and how, and nothing is made', async () => {
      await aSealedBackup();

      await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
        /values sealed for 2 data subject\(s\).*The master key is neither in .*target\/subject-keys-master\.key nor in SUBJECT_KEYS_MASTER_KEY.*--subject-keys.*--without-subject-keys restores anyway/,
      );
      await expect(stat(target)).rejects.toThrow(/ENOENT/);
      expect(await besideTarget()).toEqual([]);
    });

    it('when the master key is there but no key store, then it is refused', async () => {
      const { masterKeyFile } = await aSealedBackup();
      await mkdir(target);
      await copyFile(masterKeyFile, join(target, 'subject-keys-master.key'));

      await expect(restoreDataDirectory({ from: files.backup, dataDir: target })).rejects.toThrow(
        /There is no key store at .*target\/subject-keys\.db\./,
      );
      await expect(
        restoreDataDirectory({
          from: files.backup,
          dataDir: join(files.dir, 'configured'),
          configuredSubjectKeysMasterKey: TEST_SUBJECT_KEYS_MASTER_KEY,
        }),
      ).rejects.toThrow(/There is no key store at/);
      expect(await readdir(target)).toEqual(['subject-keys-master.key']);
    });

    it('when --subject-keys names the product’s key store while the product has it open, then it is copied in with the backup, and opens it', async () => {
      const { keyStore, masterKeyFile } = await aSealedBackup();
      await mkdir(target);
      await copyFile(masterKeyFile, join(target, 'subject-keys-master.key'));
      const serving = openSqliteSubjectKeyStore({ file: keyStore });
      try {
        await serving.getOrCreate('organization:made-since', { wrappedKey: 'v1.x.y.z', createdAt: '2026-12-03T00:00:00Z' });

        const report = await restoreDataDirectory({ from: files.backup, dataDir: target, subjectKeysFrom: keyStore });

        expect(report).toMatchObject({ subjectKeys: 'opens', subjectKeyStore: join(target, 'subject-keys.db') });
        expect((await stat(join(target, 'subject-keys.db'))).mode & 0o777).toBe(0o600);
        const subjects = rowsOf(join(target, 'subject-keys.db'), 'SELECT subject FROM subject_keys ORDER BY subject').map(
          (row) => row.subject,
        );
        expect(subjects).toEqual(['organization:made-since', 'organization:org-a', 'organization:org-b']);
        // The product's store is not disturbed.
        expect(await serving.read('organization:org-a')).toMatchObject({ state: 'active' });
      } finally {
        await serving.close();
      }
      // Restored again with --force, the key store put in before is moved aside with the databases.
      const again = await restoreDataDirectory({ from: files.backup, dataDir: target, subjectKeysFrom: keyStore, force: true });
      expect(await readdir(again.replacedInto!)).toContain('subject-keys.db');
    });

    it('when a subject’s key was destroyed since the backup (an erasure), then the key store still opens it: the subject reads as erased', async () => {
      const { keyStore, masterKeyFile } = await aSealedBackup();
      const serving = openSqliteSubjectKeyStore({ file: keyStore });
      await serving.destroy('organization:org-b', '2026-12-03T00:00:00Z');
      await serving.close();
      await mkdir(target);
      await copyFile(masterKeyFile, join(target, 'subject-keys-master.key'));
      await copyFile(keyStore, join(target, 'subject-keys.db'));

      expect((await restoreDataDirectory({ from: files.backup, dataDir: target })).subjectKeys).toBe('opens');
    });

    it('when the key store is another (older, another deployment’s) or the master key is another, then it is refused, naming the subjects', async () => {
      await aSealedBackup();
      const other = await aSealedDataDirectory(join(files.dir, 'other-product'), ['org-a']);
      await mkdir(target);
      await copyFile(other.masterKeyFile, join(target, 'subject-keys-master.key'));

      await expect(restoreDataDirectory({ from: files.backup, dataDir: target, subjectKeysFrom: other.keyStore })).rejects.toThrow(
        /do not open 2 of them: (?=.*1 with another key \(organization:org-a\))(?=.*1 with no key in the store \(organization:org-b\))/,
      );
      await expect(
        restoreDataDirectory({
          from: files.backup,
          dataDir: target,
          subjectKeysFrom: join(files.dataDir, 'subject-keys.db'),
          configuredSubjectKeysMasterKey: Buffer.alloc(32, 1),
        }),
      ).rejects.toThrow(/and the master key in SUBJECT_KEYS_MASTER_KEY do not open 2 of them: 2 with another master key/);
      expect(await readdir(target)).toEqual(['subject-keys-master.key']);
    });

    it('when the keys are lost and the operator says so, then it restores without them', async () => {
      await aSealedBackup();

      const report = await restoreDataDirectory({ from: files.backup, dataDir: target, withoutSubjectKeys: true });

      expect(report.subjectKeys).toBe('missing');
      expect(rowsOf(join(target, 'rsd.sqlite'), 'SELECT COUNT(*) AS n FROM events')).toEqual([{ n: 3 }]);
    });
  });
});
