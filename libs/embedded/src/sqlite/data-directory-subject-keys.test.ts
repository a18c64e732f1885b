import { createDecipheriv, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EVENT_TYPES, TOPICS } from '@rsd/contracts';
import { SealedValueError, subjectCipher, type SealedValue } from '@rsd/platform';
import type { SubjectKeyStore } from '@rsd/ports';
import { aSealedDataDirectory, TEST_SUBJECT_KEYS_MASTER_KEY } from '../testing/sealed-data-directory';
import { aTempDirectoryPerTest } from '../testing/temp-database';
import { backupDataDirectory } from './backup';
import { openEmbeddedDatabase } from './database';
import { runDataDirectorySubjectKeys } from './data-directory-subject-keys';
import { restoreDataDirectory } from './restore';
import { openSqliteSubjectKeyStore, SUBJECT_KEYS_DATABASE } from './sqlite-subject-key-store';

const OTHER_MASTER_KEY = Buffer.alloc(32, 9);
const DAY_MS = 86_400_000;
const env = {};

/** What a report of the maintenance says, as JSON. */
type Report = Record<string, unknown>;

describe('rsd subject-keys on a data directory (decision 56)', () => {
  const temp = aTempDirectoryPerTest('subject-keys-maintenance');
  const dataDir = () => join(temp.dir, 'data');
  const backups = () => join(temp.dir, 'backups');
  const keyStore = () => join(dataDir(), SUBJECT_KEYS_DATABASE);

  beforeEach(async () => {
    await aSealedDataDirectory(dataDir(), ['acme', 'beta']);
    await mkdir(backups());
  });

  const backUp = async (options: { keepDays?: string } = {}): Promise<Report & { backup: string }> =>
    (await runDataDirectorySubjectKeys({ command: 'backup', to: backups(), ...options }, { dataDir: dataDir(), env })) as Report & {
      backup: string;
    };
  const restore = async (file: string, options: { forceExpired?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<Report> =>
    (await runDataDirectorySubjectKeys(
      { command: 'restore', file, forceExpired: options.forceExpired },
      { dataDir: dataDir(), env: options.env ?? env },
    )) as Report;
  const withStore = async <T>(work: (store: SubjectKeyStore) => Promise<T>): Promise<T> => {
    const store = openSqliteSubjectKeyStore({ file: keyStore() });
    try {
      return await work(store);
    } finally {
      await store.close();
    }
  };
  /** Appends events in clear to the data directory's log, as the erasure routes append theirs. */
  const appendToLog = async (events: { type: string; time: string; data: Record<string, unknown> }[]) => {
    const db = openEmbeddedDatabase(join(dataDir(), 'rsd.sqlite'));
    try {
      for (const { type, time, data } of events) {
        const value = JSON.stringify({ specversion: '1.0', id: randomUUID(), source: 'test', type, time, data });
        await db.write(() =>
          db.statement('INSERT INTO events (topic, key, value) VALUES (?, ?, ?)').run(TOPICS.authorizations, 'k', value),
        );
      }
    } finally {
      await db.close();
    }
  };
  /** Every sealed value of the log, by subject. */
  const sealedValues = async (): Promise<SealedValue[]> => {
    const db = openEmbeddedDatabase(join(dataDir(), 'rsd.sqlite'));
    try {
      const rows = db.statement("SELECT value FROM events WHERE value LIKE '%rsdsealed%'").all();
      return rows.flatMap((row) => (JSON.parse(String(row.value)) as { data: { sealed: SealedValue[] } }).data.sealed);
    } finally {
      await db.close();
    }
  };
  const opened = (masterKey: Buffer, previousMasterKey?: Buffer) =>
    withStore(async (store) => {
      const cipher = subjectCipher({ store, masterKey, ...(previousMasterKey ? { previousMasterKey } : {}), cache: { ttlMs: 0 } });
      const outcomes: Record<string, string> = {};
      for (const sealed of await sealedValues()) {
        outcomes[sealed.subject] = await cipher.open(sealed).then(
          (outcome) => outcome.status,
          (error: unknown) => (error instanceof SealedValueError ? error.problem : String(error)),
        );
      }
      return outcomes;
    });

  it('when the key store is backed up, then the file (0600) holds every key wrapped and no usable key: not the keys, not the master key, and another master key opens nothing', async () => {
    await withStore((store) => store.destroy('organization:gone', '2026-12-01T00:00:00.000Z'));

    const report = await backUp();

    expect(report).toMatchObject({ keys: 2, destroyed: 1, expired: [], keepDays: 35 });
    expect((await stat(report.backup)).mode & 0o777).toBe(0o600);
    expect(report.backup).toMatch(/subject-keys-\d{8}T\d{9}Z\.jsonl$/);
    const text = await readFile(report.backup, 'utf8');
    const raw = await withStore(async (store) =>
      (await store.list(undefined, 100)).flatMap((key) => (key.state === 'active' ? [unwrapped(key.subject, key.wrappedKey)] : [])),
    );
    expect(raw).toHaveLength(2);
    for (const bytes of [...raw, TEST_SUBJECT_KEYS_MASTER_KEY]) {
      for (const encoding of ['base64', 'base64url', 'hex'] as const) expect(text).not.toContain(bytes.toString(encoding));
    }
    expect(text).toContain('"organization:gone"');

    // Put back into an empty store under another master key: refused before anything is written, and a cipher of that key opens nothing.
    await rm(keyStore());
    await expect(restore(report.backup, { env: { SUBJECT_KEYS_MASTER_KEY: OTHER_MASTER_KEY.toString('base64') } })).rejects.toThrow(
      /holds 2 key\(s\) wrapped by a master key that is not configured/,
    );
    await restore(report.backup);
    expect(await opened(OTHER_MASTER_KEY)).toEqual({ 'organization:acme': 'wrong-master-key', 'organization:beta': 'wrong-master-key' });
    expect(await opened(TEST_SUBJECT_KEYS_MASTER_KEY)).toEqual({ 'organization:acme': 'opened', 'organization:beta': 'opened' });
  });

  it("when a backup is made, then only the directory's key-store backups older than the retention are deleted", async () => {
    const header = (daysAgo: number) =>
      JSON.stringify({
        format: 'rsd-subject-keys-backup',
        version: 1,
        createdAt: new Date(Date.now() - daysAgo * DAY_MS).toISOString(),
        masterKeyId: 'x',
      });
    const file = (name: string) => join(backups(), name);
    await writeFile(file('subject-keys-20261001T000000000Z.jsonl'), `${header(40)}\n{"end":true,"subjects":0}\n`);
    await writeFile(file('subject-keys-20261120T000000000Z.jsonl'), `${header(13)}\n{"end":true,"subjects":0}\n`);
    await writeFile(file('subject-keys-20261002T000000000Z.jsonl'), 'not a backup\n');
    await writeFile(file('rsd-20261001T000000Z.tar'), 'the log backup of the same day');
    const elsewhere = join(temp.dir, 'elsewhere');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'subject-keys-20261001T000000000Z.jsonl'), `${header(40)}\n{"end":true,"subjects":0}\n`);

    const first = await backUp({ keepDays: '14' });
    expect(first.expired).toEqual([file('subject-keys-20261001T000000000Z.jsonl')]);
    expect((await readdir(backups())).sort()).toEqual(
      [
        'rsd-20261001T000000Z.tar',
        'subject-keys-20261002T000000000Z.jsonl',
        'subject-keys-20261120T000000000Z.jsonl',
        first.backup.slice(backups().length + 1),
      ].sort(),
    );
    expect(await readdir(elsewhere)).toHaveLength(1);
    expect((await backUp({ keepDays: '10' })).expired).toEqual([file('subject-keys-20261120T000000000Z.jsonl')]);
  });

  it('when the key store is lost after an offboarding and a recipient erasure, then a restore of an older backup applies the erasures of the log again', async () => {
    await withStore(async (store) => {
      const cipher = subjectCipher({ store, masterKey: TEST_SUBJECT_KEYS_MASTER_KEY });
      for (const subject of ['grant:rs_acme1', 'grant:rs_beta1', 'grant:rs_beta2']) await cipher.seal(subject, 'a name');
    });
    const grant = (organizationId: string, clientId: string, time: string) => ({
      type: EVENT_TYPES.authorizationCreated,
      time,
      data: { organizationId, clientId },
    });
    await appendToLog([
      grant('acme', 'rs_acme1', '2026-12-01T10:00:00.000Z'),
      grant('beta', 'rs_beta1', '2026-12-01T10:00:00.000Z'),
      grant('beta', 'rs_beta2', '2026-12-01T10:00:00.000Z'),
    ]);
    const { backup } = await backUp();
    // The erasures, as the credentials service makes them: the keys destroyed, then the events in clear.
    await withStore(async (store) => {
      for (const subject of ['organization:acme', 'grant:rs_acme1', 'grant:rs_beta1'])
        await store.destroy(subject, '2026-12-02T10:00:00.000Z');
    });
    await appendToLog([
      {
        type: EVENT_TYPES.organizationOffboarded,
        time: '2026-12-02T10:00:00.000Z',
        data: { organizationId: 'acme', startedAt: '2026-12-02T10:00:00.000Z' },
      },
      {
        type: EVENT_TYPES.recipientErased,
        time: '2026-12-02T10:00:01.000Z',
        data: { organizationId: 'beta', clientId: 'rs_beta1', subject: 'grant:rs_beta1' },
      },
      // A grant of the offboarded organization's id made after its offboarding is not the offboarding's.
      grant('acme', 'rs_acme2', '2026-12-03T10:00:00.000Z'),
    ]);
    await rm(keyStore());

    expect(await restore(backup)).toMatchObject({ restored: 5, alreadyThere: 0, destroyedSince: 0, tombstones: 0, erasuresReapplied: 3 });

    expect(await opened(TEST_SUBJECT_KEYS_MASTER_KEY)).toEqual({ 'organization:acme': 'erased', 'organization:beta': 'opened' });
    const states = await withStore(async (store) =>
      Object.fromEntries((await store.list(undefined, 100)).map((key) => [key.subject, key.state])),
    );
    expect(states).toEqual({
      'grant:rs_acme1': 'destroyed',
      'grant:rs_beta1': 'destroyed',
      'grant:rs_beta2': 'active',
      'organization:acme': 'destroyed',
      'organization:beta': 'active',
    });
    // Again, merged into the store as it is now: nothing changes.
    expect(await restore(backup)).toMatchObject({ restored: 0, alreadyThere: 2, destroyedSince: 3, erasuresReapplied: 0 });
  });

  it('when a data directory is lost, then its key store restored from its backup and its log from a later backup read an erasure made between them as erased', async () => {
    const { backup: keysBackup } = await backUp();
    await withStore((store) => store.destroy('organization:acme', '2026-12-02T10:00:00.000Z'));
    await appendToLog([
      {
        type: EVENT_TYPES.organizationOffboarded,
        time: '2026-12-02T10:00:00.000Z',
        data: { organizationId: 'acme', startedAt: '2026-12-02T10:00:00.000Z' },
      },
    ]);
    const logBackup = join(temp.dir, 'rsd.tar');
    await backupDataDirectory({ dataDir: dataDir(), into: logBackup });
    const masterKey = await readFile(join(dataDir(), 'subject-keys-master.key'));
    await rm(dataDir(), { recursive: true });

    // Into the new directory: the master key, the key store from its backup (no log there yet), then the log.
    await mkdir(dataDir());
    await writeFile(join(dataDir(), 'subject-keys-master.key'), masterKey, { mode: 0o600 });
    expect(await restore(keysBackup)).toMatchObject({ restored: 2, erasuresReapplied: 0 });
    expect(await restoreDataDirectory({ from: logBackup, dataDir: dataDir() })).toMatchObject({
      subjectKeys: 'opens',
      erasuresReapplied: 1,
    });

    expect(await opened(TEST_SUBJECT_KEYS_MASTER_KEY)).toEqual({ 'organization:acme': 'erased', 'organization:beta': 'opened' });
  });

  it("when a backup is merged into the current store, then the store's own tombstones stay (an erasure the log does not name yet)", async () => {
    const { backup } = await backUp();
    await withStore((store) => store.destroy('organization:acme', '2026-12-02T10:00:00.000Z'));

    expect(await restore(backup)).toMatchObject({ restored: 0, alreadyThere: 1, destroyedSince: 1, erasuresReapplied: 0 });

    expect(await opened(TEST_SUBJECT_KEYS_MASTER_KEY)).toEqual({ 'organization:acme': 'erased', 'organization:beta': 'opened' });
  });

  it('when a backup is older than the retention, cut short, or not a backup, then the restore refuses it before writing anything', async () => {
    const { backup } = await backUp();
    const lines = (await readFile(backup, 'utf8')).split('\n');
    const old = join(backups(), 'old.jsonl');
    const header = { ...(JSON.parse(lines[0]!) as object), createdAt: new Date(Date.now() - 36 * DAY_MS).toISOString() };
    await writeFile(old, [JSON.stringify(header), ...lines.slice(1)].join('\n'));
    const cut = join(backups(), 'cut.jsonl');
    await writeFile(cut, lines.slice(0, 2).join('\n'));
    await rm(keyStore());

    await expect(restore(old)).rejects.toThrow(/more than 35 days ago \(the key-store backups' retention\).*--force-expired/);
    await expect(restore(cut)).rejects.toThrow(/is not a whole key-store backup: it is cut short or damaged/);
    await expect(restore(join(dataDir(), 'rsd.sqlite'))).rejects.toThrow(/is not a key-store backup made by subject-keys backup/);
    await expect(restore(join(backups(), 'none.jsonl'))).rejects.toThrow(/does not exist: no key-store backup to restore/);
    expect(await withStore((store) => store.list(undefined, 10))).toEqual([]);

    expect(await restore(old, { forceExpired: true })).toMatchObject({ restored: 2 });
  });

  it('when the retention is out of range, then the command fails naming the option or the variable', async () => {
    await expect(backUp({ keepDays: '0' })).rejects.toThrow('--keep-days: must be a whole number of days from 1 to 90');
    await expect(backUp({ keepDays: '91' })).rejects.toThrow('--keep-days: must be a whole number of days from 1 to 90');
    await expect(
      runDataDirectorySubjectKeys(
        { command: 'backup', to: backups() },
        { dataDir: dataDir(), env: { SUBJECT_KEYS_BACKUP_RETENTION_DAYS: '3.5' } },
      ),
    ).rejects.toThrow('SUBJECT_KEYS_BACKUP_RETENTION_DAYS: must be a whole number of days from 1 to 90');
    expect(await readdir(backups())).toEqual([]);
  });

  it('when the master key is rotated, then every key is re-wrapped once, the new key alone opens everything, and a wrong previous key is refused', async () => {
    const next = Buffer.alloc(32, 11);
    const rotating = {
      SUBJECT_KEYS_MASTER_KEY: next.toString('base64'),
      SUBJECT_KEYS_PREVIOUS_MASTER_KEY: TEST_SUBJECT_KEYS_MASTER_KEY.toString('base64'),
    };
    const rotate = (rotationEnv: NodeJS.ProcessEnv) =>
      runDataDirectorySubjectKeys({ command: 'rotate' }, { dataDir: dataDir(), env: rotationEnv });
    await withStore((store) => store.destroy('organization:gone', '2026-12-01T00:00:00.000Z'));

    // The new key alone on an unrotated store: refused as today, never silently.
    expect(await opened(next)).toEqual({ 'organization:acme': 'wrong-master-key', 'organization:beta': 'wrong-master-key' });
    await expect(rotate({ ...rotating, SUBJECT_KEYS_PREVIOUS_MASTER_KEY: OTHER_MASTER_KEY.toString('base64') })).rejects.toThrow(
      /2 stored key\(s\) are wrapped by a master key that is neither SUBJECT_KEYS_MASTER_KEY \(\S+\) nor SUBJECT_KEYS_PREVIOUS_MASTER_KEY \(\S+\): 2 by \S+ \(organization:acme, organization:beta\)/,
    );
    await expect(rotate({ SUBJECT_KEYS_MASTER_KEY: next.toString('base64') })).rejects.toThrow(
      /nor a SUBJECT_KEYS_PREVIOUS_MASTER_KEY \(none is set\)/,
    );
    await expect(rotate({ ...rotating, SUBJECT_KEYS_PREVIOUS_MASTER_KEY: rotating.SUBJECT_KEYS_MASTER_KEY })).rejects.toThrow(
      'SUBJECT_KEYS_PREVIOUS_MASTER_KEY: is SUBJECT_KEYS_MASTER_KEY itself',
    );
    // Both keys: the product reads everything during the rotation.
    expect(await opened(next, TEST_SUBJECT_KEYS_MASTER_KEY)).toEqual({ 'organization:acme': 'opened', 'organization:beta': 'opened' });

    expect(await rotate(rotating)).toMatchObject({ rewrapped: 2, alreadyCurrent: 0, destroyed: 1, changedMeanwhile: 0 });
    expect(await rotate(rotating)).toMatchObject({ rewrapped: 0, alreadyCurrent: 2, destroyed: 1 });

    expect(await opened(next)).toEqual({ 'organization:acme': 'opened', 'organization:beta': 'opened' });
    expect(await opened(TEST_SUBJECT_KEYS_MASTER_KEY)).toEqual({
      'organization:acme': 'wrong-master-key',
      'organization:beta': 'wrong-master-key',
    });
  });
});

/** A wrapped key opened as the cipher does (v1.<digest>.<nonce>.<ciphertext+tag>), to look for its bytes elsewhere. */
function unwrapped(subject: string, wrappedKey: string): Buffer {
  const [, , nonce, sealed] = wrappedKey.split('.') as [string, string, string, string];
  const bytes = Buffer.from(sealed, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', TEST_SUBJECT_KEYS_MASTER_KEY, Buffer.from(nonce, 'base64url'));
  decipher.setAAD(Buffer.from(`rsd-subject-key\nv1\n${subject}`, 'utf8'));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]);
}
