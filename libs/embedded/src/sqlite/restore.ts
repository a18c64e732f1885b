import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, normalize, resolve } from 'node:path';
import { backup as copySqliteDatabase, DatabaseSync } from 'node:sqlite';
import { extract as extractTar, type ReadEntry } from 'tar';
import {
  SealedValueError,
  SUBJECT_KEYS_MASTER_KEY,
  SUBJECT_KEYS_MASTER_KEY_SECRET,
  subjectCipher,
  type SealedValue,
  type SubjectCipher,
} from '@rsd/platform';
import type { SubjectKeyStore } from '@rsd/ports';
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  checkIntegrity,
  MAIN_DATABASE,
  MANIFEST,
  productDatabases,
  sha256Of,
  syncPath,
  WEBHOOK_KEY_FILE,
  webhookKeyOf,
  type BackupManifest,
} from './backup';
import { EARLIER_AUTHORIZATIONS, EARLIER_EVENT_LOG } from './import-earlier-data';
import { masterKeyIn, reapplyLogErasures } from './data-directory-subject-keys';
import { SUBJECT_KEYS_DATABASE, subjectKeyOf } from './sqlite-subject-key-store';

export interface RestoreOptions {
  /** A backup made by `backupDataDirectory` (rsd backup): its file, or the directory an earlier version made (or a `tar -xf` of the file). */
  from: string;
  /** The data directory to put it in: new, or (with `force`) one whose product is stopped. */
  dataDir: string;
  /** Replace the databases the directory holds; they are moved aside, not deleted. */
  force?: boolean;
  /** WEBHOOK_SECRET_KEY where it is configured (it wins over the file, as in the product). */
  configuredWebhookKey?: string;
  /** Restore although the key that sealed the webhook secrets is not there: those subscriptions then cannot sign. */
  withoutWebhookKey?: boolean;
  /** SUBJECT_KEYS_MASTER_KEY where it is configured (it wins over the file, as in the product). */
  configuredSubjectKeysMasterKey?: Buffer;
  /**
   * A subject key store to put into the data directory with the backup: the product's current
   * `subject-keys.db` (copied with SQLite's online backup, so also while its product serves). Without
   * it, the one the data directory holds is checked.
   */
  subjectKeysFrom?: string;
  /** Restore although the subjects' keys are not there: the sealed events the views had not read then cannot be opened. */
  withoutSubjectKeys?: boolean;
  now?: () => Date;
}

export interface RestoreReport {
  dataDir: string;
  databases: string[];
  /** Where the databases the directory held before went (with `force`). */
  replacedInto?: string;
  /**
   * `matches`: the key the product will use is the one that sealed the secrets; `unchecked`: a key is
   * there, but the backup did not know which one sealed them; `not needed`: no subscription;
   * `missing`: restored without it (`withoutWebhookKey`).
   */
  webhookKey: 'matches' | 'unchecked' | 'not needed' | 'missing';
  /**
   * `opens`: the master key and the key store open a sealed value of every data subject of the
   * backup's log (or know the subject erased); `not needed`: the log holds no sealed event;
   * `missing`: restored without them (`withoutSubjectKeys`).
   */
  subjectKeys: 'opens' | 'not needed' | 'missing';
  /** Where the key store given with `subjectKeysFrom` was put. */
  subjectKeyStore?: string;
  /** Subjects the restored log says were erased that the key store held active, destroyed again (decision 56). */
  erasuresReapplied?: number;
}

/** What a product keeps in a data directory besides its secrets: its databases, their journals, and an earlier version's files it would import at start. */
const DATA = /\.sqlite(-wal|-shm|-journal)?$/;
const EARLIER_LAYOUT = [EARLIER_EVENT_LOG, EARLIER_AUTHORIZATIONS, 'access-log'];
/** The subject key store's database and its journals: data in the directory when a restore is given one to put there. */
const KEY_STORE = new RegExp(`^${SUBJECT_KEYS_DATABASE.replace('.', '\\.')}(-wal|-shm|-journal)?$`);

/**
 * `rsd restore` (decision 41). A backup file is unpacked into a staging directory beside the data
 * directory (removed in all cases); a directory (an earlier version's backup) is read as it is.
 * Refuses before it changes anything when:
 * - the file is not a whole tar archive, or holds an entry other than a plain file or directory, or
 *   one whose path is absolute or climbs out (`..`): nothing of it is unpacked outside the staging directory;
 * - the backup is not whole (a file missing, its size or SHA-256 not the manifest's) or a database
 *   in it fails `PRAGMA integrity_check`;
 * - the backup holds webhook subscriptions and the key that sealed their secrets is not where the
 *   product will look for it (WEBHOOK_SECRET_KEY, else DATA_DIR/webhook-secret-key), or is another
 *   key: a product started without it would make a new key and could not sign for any of them;
 * - the backup's log holds sealed events (decision 56) and the master key (SUBJECT_KEYS_MASTER_KEY,
 *   else DATA_DIR/subject-keys-master.key) or the subject key store (`subjectKeysFrom`, else
 *   DATA_DIR/subject-keys.db) is not there, or they do not open a sealed value of each of its
 *   subjects: a product started so would dead-letter every event its views had not read;
 * - a process holds one of the directory's databases open (a product, a rebuild): `databasesInUse`;
 * - the directory holds data already, unless `force`: then it is moved into `replaced-<time>/`.
 *
 * Each database is copied into the directory under a temporary name, checked again there, and only
 * then renamed into place (the event log's database last), so no product ever opens half a file.
 */
export async function restoreDataDirectory(options: RestoreOptions): Promise<RestoreReport> {
  const from = resolve(options.from);
  const dataDir = resolve(options.dataDir);
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(from)).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`${from} does not exist: no backup to restore`);
    throw error;
  }
  if (isDirectory) return restoreFrom({ dir: from, name: (file) => join(from, file), label: from }, dataDir, options);
  const staging = await mkdtemp(join(await nearestExisting(dirname(dataDir)), `.${basename(dataDir)}.restoring-`));
  try {
    await unpack(from, staging);
    return await restoreFrom({ dir: staging, name: (file) => `${file} in ${from}`, label: from }, dataDir, options);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Where the backup's files are read, and how a message names them (the archive's member, not the staging copy). */
interface Backup {
  dir: string;
  name(file: string): string;
  label: string;
}

/** The closest directory that exists, for the staging directory: the restore creates nothing of the data directory's path before its checks. */
async function nearestExisting(dir: string): Promise<string> {
  for (let at = dir; ; at = dirname(at)) {
    try {
      if ((await stat(at)).isDirectory()) return at;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(at) === at) throw error;
    }
  }
}

/**
 * A backup file unpacked into `into` (empty, private). node-tar already keeps every entry inside it
 * (it strips a leading `/`, skips `..`, never follows a link it made); refused here, rather than
 * skipped, is any entry a backup never holds: an absolute path, a `..`, a link, a device, a FIFO.
 * `strict`: a damaged or cut archive is an error, not a warning.
 */
async function unpack(file: string, into: string): Promise<void> {
  const refused: string[] = [];
  const filter = (path: string, entry: unknown): boolean => {
    const type = (entry as ReadEntry).type;
    const problem = entryProblem(path, type);
    if (problem) refused.push(`${JSON.stringify(path)} (${problem})`);
    return problem === undefined;
  };
  try {
    await extractTar({ file, cwd: into, strict: true, filter, noChmod: true, preserveOwner: false });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${file} is not a whole backup: it cannot be read as a tar archive (${reason}); the backup is damaged or cut short`, {
      cause: error,
    });
  }
  if (refused.length > 0) {
    throw new Error(
      `${file} is not a backup made by rsd backup: it holds ${refused.length === 1 ? 'an entry' : 'entries'} a backup never holds: ${refused.join(', ')}`,
    );
  }
}

function entryProblem(path: string, type: string): string | undefined {
  if (type !== 'File' && type !== 'OldFile' && type !== 'Directory') return `a ${type}, not a file or directory`;
  if (path.startsWith('/') || /^[a-zA-Z]:/.test(path) || path.startsWith('\\')) return 'an absolute path';
  if (path.split(/[/\\]+/).includes('..') || normalize(path).startsWith('..')) return 'a path out of the backup (..)';
  return undefined;
}

async function restoreFrom(backup: Backup, dataDir: string, options: RestoreOptions): Promise<RestoreReport> {
  if (options.subjectKeysFrom !== undefined && resolve(options.subjectKeysFrom) === join(dataDir, SUBJECT_KEYS_DATABASE)) {
    throw new Error(
      `${join(dataDir, SUBJECT_KEYS_DATABASE)} is the data directory's own key store: restore without --subject-keys to keep it`,
    );
  }
  const manifest = await readManifest(backup);
  for (const database of manifest.databases) await checkBackedUpDatabase(backup, database);
  const webhookKey = await checkWebhookKey(manifest, dataDir, options);
  const subjectKeys = await checkSubjectKeys(backup, dataDir, options);

  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const inUse = await databasesInUse(dataDir);
  if (inUse.length > 0) {
    throw new Error(
      `${dataDir} is in use: a process (the product, or a rebuild of its views) has ${inUse.join(', ')} open. ` +
        'Stop it before restoring into this directory, or restore into a new one.',
    );
  }
  const existing = (await readdir(dataDir)).filter(
    (name) => DATA.test(name) || EARLIER_LAYOUT.includes(name) || (options.subjectKeysFrom !== undefined && KEY_STORE.test(name)),
  );
  let replacedInto: string | undefined;
  if (existing.length > 0) {
    if (!options.force) {
      throw new Error(
        `${dataDir} already holds data (${existing.join(', ')}). Pass --force to replace it: ` +
          'what it holds is moved into a replaced-<time> directory inside it, not deleted.',
      );
    }
    const stamp = (options.now?.() ?? new Date()).toISOString().replace(/[:.]/g, '-');
    replacedInto = join(dataDir, `replaced-${stamp}`);
    await mkdir(replacedInto, { mode: 0o700 });
    for (const name of existing) await rename(join(dataDir, name), join(replacedInto, name));
  }

  const subjectKeyStore = options.subjectKeysFrom === undefined ? undefined : await placeKeyStore(options.subjectKeysFrom, dataDir);
  // The event log's database last: until it is in place, nothing looks like a restored directory.
  const order = [...manifest.databases].sort((a, b) => Number(a.file === MAIN_DATABASE) - Number(b.file === MAIN_DATABASE));
  for (const { file } of order) {
    const placing = join(dataDir, `.${file}.restoring`);
    await copyFile(join(backup.dir, file), placing);
    await chmod(placing, 0o600);
    const problems = checkIntegrity(placing);
    if (problems.length > 0) {
      await rm(placing, { force: true });
      throw new Error(`${file}, copied into ${dataDir}, fails SQLite's integrity check: ${problems.join('; ')}`);
    }
    await syncPath(placing);
    await rename(placing, join(dataDir, file));
  }
  await syncPath(dataDir);
  return {
    dataDir,
    databases: manifest.databases.map((database) => database.file),
    ...(replacedInto ? { replacedInto } : {}),
    webhookKey,
    subjectKeys,
    ...(subjectKeyStore ? { subjectKeyStore } : {}),
    // Decision 56: a key store restored from its own backup may hold keys erased since; the log says which.
    ...(subjectKeys === 'opens' ? { erasuresReapplied: await reapplyLogErasures(dataDir) } : {}),
  };
}

/**
 * The databases of a directory that a process has open. A product (and a rebuild) opens its
 * databases in WAL mode, and a connection to a WAL database holds a shared lock on its file for as
 * long as it is open, idle or not; asking for the exclusive lock, without waiting, is refused while
 * any other connection exists, in this process or another. The operating system drops a dead
 * process's locks, so unlike a pid file nothing stale is ever left to clear.
 */
export async function databasesInUse(dataDir: string): Promise<string[]> {
  const inUse: string[] = [];
  for (const file of await productDatabases(dataDir)) if (isOpenElsewhere(join(dataDir, file))) inUse.push(file);
  return inUse;
}

const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_CORRUPT = 11;
const SQLITE_NOTADB = 26;

function isOpenElsewhere(file: string): boolean {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(file, { timeout: 0 });
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    return false;
  } catch (error) {
    const code = (error as { errcode?: number }).errcode;
    if (code === SQLITE_BUSY || code === SQLITE_LOCKED) return true;
    // Not a database, or a damaged one: nothing can be serving it, and replacing it is what a restore is for.
    if (code === SQLITE_NOTADB || code === SQLITE_CORRUPT) return false;
    throw new Error(`cannot tell whether ${file} is in use: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  } finally {
    // The last connection to close checkpoints and removes the write-ahead log: the file is whole before it is moved.
    if (db?.isOpen) db.close();
  }
}

async function readManifest(backup: Backup): Promise<BackupManifest> {
  const from = backup.label;
  let text: string;
  try {
    text = await readFile(join(backup.dir, MANIFEST), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new Error(`${from} is not a backup made by rsd backup (no ${MANIFEST} in it)`);
    throw error;
  }
  let manifest: Partial<BackupManifest>;
  try {
    manifest = JSON.parse(text) as Partial<BackupManifest>;
  } catch {
    throw new Error(`${backup.name(MANIFEST)} is not valid JSON: the backup is damaged`);
  }
  if (manifest.format !== BACKUP_FORMAT || manifest.version !== BACKUP_VERSION) {
    throw new Error(`${from} is not a backup this version can restore (format ${String(manifest.format)} ${String(manifest.version)})`);
  }
  const databases = manifest.databases;
  // Plain names only: a damaged or crafted manifest must not make the restore read or write elsewhere.
  if (!Array.isArray(databases) || databases.some((database) => !/^[\w.-]+\.sqlite$/.test(String(database?.file)))) {
    throw new Error(`${backup.name(MANIFEST)} does not list its databases as a backup does: the backup is damaged`);
  }
  if (!databases.some((database) => database.file === MAIN_DATABASE)) throw new Error(`${from} holds no ${MAIN_DATABASE}`);
  return manifest as BackupManifest;
}

async function checkBackedUpDatabase(backup: Backup, database: BackupManifest['databases'][number]): Promise<void> {
  const file = join(backup.dir, database.file);
  const named = backup.name(database.file);
  let bytes: number;
  try {
    bytes = (await stat(file)).size;
  } catch {
    throw new Error(`${named} is missing: the backup is incomplete`);
  }
  if (bytes !== database.bytes || (await sha256Of(file)) !== database.sha256) {
    throw new Error(`${named} is not the file that was backed up (its size or SHA-256 differs from ${MANIFEST}): the backup is damaged`);
  }
  const problems = checkIntegrity(file, true);
  if (problems.length > 0) throw new Error(`${named} fails SQLite's integrity check: ${problems.join('; ')}`);
}

async function checkWebhookKey(manifest: BackupManifest, dataDir: string, options: RestoreOptions): Promise<RestoreReport['webhookKey']> {
  if (manifest.webhookSubscriptions === 0) return 'not needed';
  if (options.withoutWebhookKey) return 'missing';
  const key = await webhookKeyOf(dataDir, options.configuredWebhookKey);
  const what = `The backup holds ${manifest.webhookSubscriptions} webhook subscription(s) whose signing secrets are sealed with the webhook key, which a backup does not carry.`;
  const remedy =
    `Copy the backed-up product's ${WEBHOOK_KEY_FILE} (mode 0600) into ${dataDir}, or set WEBHOOK_SECRET_KEY, and restore again; ` +
    'if that key is lost, --without-webhook-key restores anyway, and those subscriptions must then be deleted and created again.';
  if (!key) {
    throw new Error(
      `${what} It is neither in ${join(dataDir, WEBHOOK_KEY_FILE)} nor in WEBHOOK_SECRET_KEY: a product started without it would make a new key and sign for none of them. ${remedy}`,
    );
  }
  if (manifest.webhookKeyFingerprint === null) return 'unchecked';
  if (key.fingerprint !== manifest.webhookKeyFingerprint) {
    throw new Error(
      `${what} The key in ${key.from} is not the one that sealed them (fingerprint ${key.fingerprint}, the backup's ${manifest.webhookKeyFingerprint}). ${remedy}`,
    );
  }
  return 'matches';
}

/**
 * One sealed value of each data subject the backup's log holds (decision 56: `data.sealed` of the
 * events marked `rsdsealed`), by subject. A part written for a subject already erased holds no value.
 */
function sealedSubjectsOf(file: string): Map<string, SealedValue> {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return sealedSubjectsIn(db);
  } finally {
    db.close();
  }
}

/** `sealedSubjectsOf` on a connection already open (a rewrite of the log holds its own). */
export function sealedSubjectsIn(db: DatabaseSync): Map<string, SealedValue> {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get()) return new Map();
  const rows = db
    .prepare(
      `SELECT json_extract(part.value, '$.subject') AS subject, MIN(part.value) AS sealed
       FROM events, json_each(CASE WHEN json_valid(events.value) THEN events.value ELSE '{}' END, '$.data.sealed') AS part
       WHERE events.value LIKE '%"rsdsealed":%' AND json_extract(part.value, '$.ciphertext') IS NOT NULL
       GROUP BY subject`,
    )
    .all();
  return new Map(rows.map((row) => [String(row.subject), JSON.parse(String(row.sealed)) as SealedValue]));
}

/** The subjects of `subjects` whose sealed value the cipher does not open (an erased one opens: as erased), by the reason. */
export async function subjectsNotOpening(
  subjects: Map<string, SealedValue>,
  cipher: Pick<SubjectCipher, 'open'>,
): Promise<Map<string, string[]>> {
  const unopened = new Map<string, string[]>();
  for (const [subject, sealed] of subjects) {
    try {
      await cipher.open(sealed);
    } catch (error) {
      if (!(error instanceof SealedValueError)) throw error;
      unopened.set(error.problem, [...(unopened.get(error.problem) ?? []), subject]);
    }
  }
  return unopened;
}

async function checkSubjectKeys(backup: Backup, dataDir: string, options: RestoreOptions): Promise<RestoreReport['subjectKeys']> {
  const subjects = sealedSubjectsOf(join(backup.dir, MAIN_DATABASE));
  if (subjects.size === 0) return 'not needed';
  if (options.withoutSubjectKeys) return 'missing';
  const masterKeyFile = join(dataDir, SUBJECT_KEYS_MASTER_KEY_SECRET.file);
  const storeFile = resolve(options.subjectKeysFrom ?? join(dataDir, SUBJECT_KEYS_DATABASE));
  const what =
    `The backup's event log holds values sealed for ${subjects.size} data subject(s) (organizations, grants, accounts), whose keys ` +
    'are in the subject key store, wrapped by the master key: a backup carries neither (an erasure destroys a key, and a backup must not bring it back).';
  const remedy =
    `Copy the product's ${SUBJECT_KEYS_MASTER_KEY_SECRET.file} (mode 0600) into ${dataDir}, or set ${SUBJECT_KEYS_MASTER_KEY}, and give the ` +
    `product's current key store with --subject-keys (its ${SUBJECT_KEYS_DATABASE}, copied safely while it serves), then restore again; ` +
    'if they are lost, --without-subject-keys restores anyway: the restored product then serves what its views held when the backup was ' +
    'made and cannot open the events they had not read.';
  const masterKey = options.configuredSubjectKeysMasterKey ?? (await masterKeyIn(masterKeyFile));
  if (!masterKey) {
    throw new Error(
      `${what} The master key is neither in ${masterKeyFile} nor in ${SUBJECT_KEYS_MASTER_KEY}: a product started without it would make a new one and open none of them. ${remedy}`,
    );
  }
  if (!(await isFile(storeFile))) throw new Error(`${what} There is no key store at ${storeFile}. ${remedy}`);
  const store = readingKeyStore(storeFile);
  let unopened: Map<string, string[]>;
  try {
    unopened = await subjectsNotOpening(subjects, subjectCipher({ store, masterKey, cache: { ttlMs: 0 } }));
  } finally {
    await store.close();
  }
  if (unopened.size > 0) {
    const said: Record<string, string> = {
      'no-key': 'no key in the store',
      'wrong-master-key': 'another master key',
      tampered: 'another key',
    };
    const count = [...unopened.values()].reduce((sum, names) => sum + names.length, 0);
    const which = [...unopened].map(([problem, names]) => `${names.length} with ${said[problem] ?? problem} (${examples(names)})`);
    throw new Error(
      `${what} The key store ${storeFile} and the master key ${options.configuredSubjectKeysMasterKey ? `in ${SUBJECT_KEYS_MASTER_KEY}` : `in ${masterKeyFile}`} ` +
        `do not open ${count} of them: ${which.join('; ')}. A key store older than the backup, another deployment's, or another master key. ${remedy}`,
    );
  }
  return 'opens';
}

const examples = (names: string[]) => `${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''}`;

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * The key store's keys, read only (the restore never makes or destroys one). Opened read-write as
 * the backup opens its sources (a read-only connection cannot recover a log a crash left), and
 * only read: a product serving on it goes on as it was.
 */
function readingKeyStore(file: string): SubjectKeyStore {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(file, { timeout: 5_000 });
    db.prepare('SELECT subject, wrapped_key, created_at, destroyed_at FROM subject_keys LIMIT 1').all();
  } catch (error) {
    throw new Error(`${file} is not a subject key store: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const refuse = () => Promise.reject(new Error('a restore only reads the subject key store'));
  return {
    read: (subject) => {
      const row = db.prepare('SELECT subject, wrapped_key, created_at, destroyed_at FROM subject_keys WHERE subject = ?').get(subject);
      return Promise.resolve(row ? subjectKeyOf(row) : undefined);
    },
    getOrCreate: refuse,
    destroy: refuse,
    list: refuse,
    rewrap: refuse,
    close: () => {
      db.close();
      return Promise.resolve();
    },
  };
}

/**
 * The key store given put into the data directory: copied by SQLite's online backup (a snapshot,
 * whatever its product commits meanwhile) under a temporary name, then renamed into place.
 */
async function placeKeyStore(from: string, dataDir: string): Promise<string> {
  const into = join(dataDir, SUBJECT_KEYS_DATABASE);
  const placing = join(dataDir, `.${SUBJECT_KEYS_DATABASE}.restoring`);
  const source = new DatabaseSync(resolve(from), { timeout: 5_000 });
  try {
    await copySqliteDatabase(source, placing);
  } finally {
    source.close();
  }
  await chmod(placing, 0o600);
  await syncPath(placing);
  await rename(placing, into);
  return into;
}
