import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, link, lstat, mkdir, mkdtemp, open, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { backup, DatabaseSync } from 'node:sqlite';
import { create as createTar } from 'tar';

export const BACKUP_FORMAT = 'rsd-embedded-backup';
export const BACKUP_VERSION = 1;
export const MANIFEST = 'manifest.json';
/** The event log's database; the product's other databases are the other `*.sqlite` files beside it. */
export const MAIN_DATABASE = 'rsd.sqlite';
/** WEBHOOK_SECRET_KEY's file in a data directory (the notifier's WEBHOOK_KEY_SECRET). */
export const WEBHOOK_KEY_FILE = 'webhook-secret-key';

export interface BackedUpDatabase {
  /** Its name in the data directory and in the backup. */
  file: string;
  bytes: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  /** Before the first copy began: every write acknowledged before this is in the backup. */
  startedAt: string;
  finishedAt: string;
  /** The event log's database first. */
  databases: BackedUpDatabase[];
  /** Subscriptions whose signing secrets are stored sealed under the webhook key, which the backup does not hold. */
  webhookSubscriptions: number;
  /** Which key sealed them (a digest of it: it reveals nothing of the key), so that a restore can check the one it is given. */
  webhookKeyFingerprint: string | null;
}

export interface BackupOptions {
  /** DATA_DIR of the product. */
  dataDir: string;
  /** The backup's file: new (never written over another). */
  into: string;
  /** WEBHOOK_SECRET_KEY where it is configured (it wins over the file, as in the product). */
  configuredWebhookKey?: string;
}

/**
 * One step of the online backup copies the whole database inside one read transaction: a snapshot
 * of the moment it began, whatever the product commits meanwhile (write-ahead log: the product's
 * writers never wait for it). With SQLite's default of 100 pages a step, every commit of the
 * product between two steps restarts the copy, and under steady ingest a large database would never
 * finish copying; in one step, no commit can restart it.
 */
const WHOLE_DATABASE_PAGES = 2_147_483_647;
/** The product may hold the write lock for a moment (a commit): a backup waits for it rather than fail. */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * `rsd backup FILE` (decision 41): a consistent copy of every database of an embedded data
 * directory, taken while the product serves, into one new file, a tar archive (POSIX ustar) of:
 *
 *   manifest.json       what is in it: each database's size and SHA-256, when it was taken, and
 *                       what a restore needs to know of the webhook key (first, so a reader meets it first)
 *   rsd.sqlite          the event log, authorizations, views and webhook queue
 *   access-log.sqlite   the access log (and any other `*.sqlite` the product keeps in DATA_DIR)
 *
 * The databases are copied into a staging directory beside the file (same filesystem), checked
 * there, packed into `.FILE.partial-<pid>`, which is synced and only then put in place: a backup cut
 * short never looks like one. Any `tar -xf` unpacks it into plain SQLite databases and the manifest,
 * which is also the layout of an earlier version's backup directory (restore.ts takes both). The
 * secrets of DATA_DIR are not in it (restore.ts).
 */
export async function backupDataDirectory(options: BackupOptions): Promise<BackupManifest> {
  const dataDir = resolve(options.dataDir);
  const into = resolve(options.into);
  const files = await productDatabases(dataDir);
  if (!files.includes(MAIN_DATABASE)) {
    throw new Error(`${dataDir} holds no ${MAIN_DATABASE}: is it the product's data directory (DATA_DIR)?`);
  }
  await mustBeNew(into);
  const beside = dirname(into);
  await mkdir(beside, { recursive: true, mode: 0o700 });
  // Staged and packed beside the target, then put in place when complete: a backup cut short never looks like one.
  const staging = await mkdtemp(join(beside, `.${basename(into)}.staging-`));
  const partial = join(beside, `.${basename(into)}.partial-${process.pid}`);
  try {
    await rm(partial, { force: true });
    const startedAt = new Date().toISOString();
    const databases: BackedUpDatabase[] = [];
    let webhookSubscriptions = 0;
    for (const file of files) {
      const copy = join(staging, file);
      await copyDatabase(join(dataDir, file), copy);
      const problems = checkIntegrity(copy);
      if (problems.length > 0) throw new Error(`the copy of ${file} fails SQLite's integrity check: ${problems.join('; ')}`);
      if (file === MAIN_DATABASE) webhookSubscriptions = countWebhooks(copy);
      databases.push({ file, bytes: (await stat(copy)).size, sha256: await sha256Of(copy) });
    }
    const key = await webhookKeyOf(dataDir, options.configuredWebhookKey);
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      startedAt,
      finishedAt: new Date().toISOString(),
      databases,
      webhookSubscriptions,
      webhookKeyFingerprint: key?.fingerprint ?? null,
    };
    await writeFile(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    // portable: no owner, group or device of this machine in the headers. ustar headers only: the
    // names are short; a database over ustar's 8 GiB gets a POSIX pax header with its size, which every tar reads.
    await createTar({ cwd: staging, file: partial, mode: 0o600, portable: true, strict: true }, [
      MANIFEST,
      ...databases.map((database) => database.file),
    ]);
    await chmod(partial, 0o600);
    await syncPath(partial);
    await putInPlace(partial, into);
    await syncPath(beside);
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
    await rm(partial, { force: true });
  }
}

/**
 * The complete archive under its name, never over a file that appeared there meanwhile: a hard link
 * fails where the name is taken. Where the filesystem has no hard links, a rename after a last look.
 */
async function putInPlace(partial: string, into: string): Promise<void> {
  try {
    await link(partial, into);
    await unlink(partial);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw alreadyExists(into);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
  }
  await mustBeNew(into);
  await rename(partial, into);
}

/** Every database the product keeps in a data directory: `rsd.sqlite` first, then any other `*.sqlite` (the access log). */
export async function productDatabases(dataDir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dataDir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const names = entries.filter((entry) => entry.isFile() && entry.name.endsWith('.sqlite')).map((entry) => entry.name);
  return names.sort((a, b) => (a === MAIN_DATABASE ? -1 : b === MAIN_DATABASE ? 1 : a.localeCompare(b)));
}

/**
 * The source is opened read-write (a read-only connection to a database in WAL mode cannot recover
 * a log a crash left), and only read. The copy is switched to a rollback journal, so the backup is
 * self-contained files that open read-only anywhere; the product switches it back to WAL at start.
 */
async function copyDatabase(source: string, copy: string): Promise<void> {
  const db = new DatabaseSync(source, { timeout: BUSY_TIMEOUT_MS });
  try {
    await backup(db, copy, { rate: WHOLE_DATABASE_PAGES });
  } catch (error) {
    throw new Error(`could not back up ${source}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  } finally {
    db.close();
  }
  await chmod(copy, 0o600);
  const written = new DatabaseSync(copy);
  try {
    written.exec('PRAGMA journal_mode = DELETE');
  } finally {
    written.close();
  }
}

/** `PRAGMA integrity_check`: nothing when it answers `ok`, else what it found (a file too damaged to check says so). */
export function checkIntegrity(file: string, readOnly = false): string[] {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(file, { readOnly });
    const messages = db
      .prepare('PRAGMA integrity_check')
      .all()
      .map((row) => String(row.integrity_check));
    return messages.length === 1 && messages[0] === 'ok' ? [] : messages;
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)];
  } finally {
    if (db?.isOpen) db.close();
  }
}

/** The webhook subscriptions in a copy of the event log's database (none where the notifier never ran). */
export function countWebhooks(file: string): number {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'webhooks'").get();
    return table ? Number(db.prepare('SELECT COUNT(*) AS n FROM webhooks').get()?.n ?? 0) : 0;
  } finally {
    db.close();
  }
}

/**
 * The webhook key a product on this data directory uses, as the product finds it (WEBHOOK_SECRET_KEY,
 * else the file it generated into DATA_DIR), known by its fingerprint only.
 */
export async function webhookKeyOf(
  dataDir: string,
  configured: string | undefined,
): Promise<{ fingerprint: string; from: string } | undefined> {
  if (configured) return { fingerprint: webhookKeyFingerprint(configured), from: 'WEBHOOK_SECRET_KEY' };
  const file = join(dataDir, WEBHOOK_KEY_FILE);
  try {
    return { fingerprint: webhookKeyFingerprint(await readFile(file, 'utf8')), from: file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A digest of the key's bytes, in a domain of its own: the key is 32 random bytes, so this gives nothing of it away. */
export function webhookKeyFingerprint(base64Key: string): string {
  const key = Buffer.from(base64Key.trim(), 'base64');
  return `sha256:${createHash('sha256').update('rsd webhook-secret-key fingerprint\0').update(key).digest('hex').slice(0, 32)}`;
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** fsync of a file or a directory (a rename is durable once its directory is synced). */
export async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function mustBeNew(file: string): Promise<void> {
  try {
    await lstat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  throw alreadyExists(file);
}

const alreadyExists = (file: string) =>
  new Error(`${file} already exists: a backup is written to a new file, never over another (move or delete it, or choose another name)`);
