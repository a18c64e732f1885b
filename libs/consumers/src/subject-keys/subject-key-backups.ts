import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { EventLog, SubjectKey, SubjectKeyStore, SubjectKeyWrapping } from '@rsd/ports';
import { erasuresInLog, reapplyErasures } from './erasures-in-log';

/**
 * A maintenance command of the subject key store refused, before it changed anything it should not
 * have: its message says why and what to do (a line for the operator, no stack).
 */
export class SubjectKeyRefusal extends Error {
  override readonly name = 'SubjectKeyRefusal';
}

/** What the first line of a key-store backup says it is. */
export const SUBJECT_KEY_BACKUP_FORMAT = 'rsd-subject-keys-backup';
const SUBJECT_KEY_BACKUP_VERSION = 1;
/** How long a key-store backup is kept, and restorable, by default (decision 56: 35 days). */
export const SUBJECT_KEY_BACKUP_RETENTION_DAYS = 35;
/** The retention's bounds: a day at least; at most the three months an erasure request may take. */
export const SUBJECT_KEY_BACKUP_RETENTION_BOUNDS = { min: 1, max: 90 } as const;
/** A key-store backup's name: its creation instant, to the millisecond, so two never meet. */
const BACKUP_NAME = /^subject-keys-(\d{8}T\d{9}Z)\.jsonl$/;
const PAGE = 500;
const DAY_MS = 86_400_000;

/** The first line of a backup: what it is, when it was made, and the master key that wraps its keys. */
export interface SubjectKeyBackupHeader {
  format: typeof SUBJECT_KEY_BACKUP_FORMAT;
  version: typeof SUBJECT_KEY_BACKUP_VERSION;
  createdAt: string;
  /** The digest of the master key current when it was made (each key names its own too). */
  masterKeyId: string;
}

export interface SubjectKeyBackupReport {
  backup: string;
  createdAt: string;
  masterKeyId: string;
  keys: number;
  destroyed: number;
  /** The key-store backups of the directory deleted for being older than the retention. */
  expired: string[];
  keepDays: number;
}

/**
 * Decision 56: a backup of the subject key store into `dir`, as `subject-keys-<instant>.jsonl` (mode
 * 0600): a header line (format, instant, the master key's digest), one line per subject (its wrapped
 * key, or its tombstone) and a closing line with the count, so a file cut short is told from a whole
 * one. The keys stay wrapped: it holds no usable key, and never the master key. Written under a
 * temporary name and renamed once synced. Then every key-store backup of `dir` older than `keepDays`
 * is deleted: past it, an erasure holds in every backup.
 */
export async function backUpSubjectKeys(options: {
  store: Pick<SubjectKeyStore, 'list'>;
  wrapping: Pick<SubjectKeyWrapping, 'masterKeyId'>;
  dir: string;
  keepDays: number;
  now?: () => Date;
}): Promise<SubjectKeyBackupReport> {
  const now = options.now ?? (() => new Date());
  const createdAt = now().toISOString();
  const name = `subject-keys-${createdAt.replace(/[-:]/g, '').replace('.', '')}.jsonl`;
  const into = resolve(options.dir, name);
  const partial = resolve(options.dir, `.${name}.partial`);
  const header: SubjectKeyBackupHeader = {
    format: SUBJECT_KEY_BACKUP_FORMAT,
    version: SUBJECT_KEY_BACKUP_VERSION,
    createdAt,
    masterKeyId: options.wrapping.masterKeyId,
  };
  let keys = 0;
  let destroyed = 0;
  await mkdir(options.dir, { recursive: true, mode: 0o700 });
  const file = await open(partial, 'wx', 0o600);
  try {
    await file.write(`${JSON.stringify(header)}\n`);
    for (let after: string | undefined, page: SubjectKey[]; (page = await options.store.list(after, PAGE)).length > 0;) {
      await file.write(page.map((key) => `${JSON.stringify(key)}\n`).join(''));
      keys += page.length;
      destroyed += page.filter((key) => key.state === 'destroyed').length;
      after = page[page.length - 1]!.subject;
    }
    await file.write(`${JSON.stringify({ end: true, subjects: keys })}\n`);
    await file.sync();
    await file.close();
    await rename(partial, into);
  } catch (error) {
    await file.close().catch(() => undefined);
    await rm(partial, { force: true });
    throw error;
  }
  await syncDirectory(options.dir);
  const expired = await expireSubjectKeyBackups({ dir: options.dir, keepDays: options.keepDays, now });
  return {
    backup: into,
    createdAt,
    masterKeyId: header.masterKeyId,
    keys: keys - destroyed,
    destroyed,
    expired,
    keepDays: options.keepDays,
  };
}

/**
 * Deletes the key-store backups of `dir` (its `subject-keys-<instant>.jsonl`, by the instant their
 * header says) made more than `keepDays` ago; any other file is left alone, and so is a file of that
 * name whose header is not a backup's. Answers the paths deleted.
 */
export async function expireSubjectKeyBackups(options: { dir: string; keepDays: number; now?: () => Date }): Promise<string[]> {
  const before = (options.now?.() ?? new Date()).getTime() - options.keepDays * DAY_MS;
  const deleted: string[] = [];
  for (const name of (await readdir(options.dir)).filter((entry) => BACKUP_NAME.test(entry)).sort()) {
    const path = resolve(options.dir, name);
    const header = await headerOf(path).catch(() => undefined);
    if (!header || Date.parse(header.createdAt) >= before) continue;
    await rm(path, { force: true });
    deleted.push(path);
  }
  if (deleted.length > 0) await syncDirectory(options.dir);
  return deleted;
}

export interface SubjectKeyRestoreReport {
  backup: string;
  createdAt: string;
  /** Keys of the backup put in the store. */
  restored: number;
  /** Keys of the backup the store held already (the same key, or another one it keeps). */
  alreadyThere: number;
  /** Keys of the backup whose subject the store holds destroyed: left destroyed. */
  destroyedSince: number;
  /** Tombstones of the backup applied (or already there). */
  tombstones: number;
  /** Subjects the event log says were erased that the store did not hold destroyed (active, or absent), destroyed now. */
  erasuresReapplied: number;
}

/**
 * Decision 56: a key-store backup put back into `store`, empty or not, through the port alone: a key
 * is created only where the subject has none (`getOrCreate`: a subject the store holds destroyed stays
 * destroyed, and a key it holds stays), a tombstone always destroys. Then every erasure the event log
 * records is applied again, so a restore never undoes an erasure made since the backup. Refused,
 * before anything is written, when the backup is older than `keepDays` (unless `forceExpired`), is
 * not whole, or holds keys the configured master keys do not wrap.
 */
export async function restoreSubjectKeys(options: {
  file: string;
  store: Pick<SubjectKeyStore, 'getOrCreate' | 'destroy' | 'read'>;
  wrapping: Pick<SubjectKeyWrapping, 'masterKeyId' | 'previousMasterKeyId' | 'wrappedBy'>;
  /** The event log whose erasures are re-applied; undefined where there is none yet (a new data directory). */
  eventLog: EventLog | undefined;
  keepDays: number;
  forceExpired?: boolean;
  now?: () => Date;
}): Promise<SubjectKeyRestoreReport> {
  const file = resolve(options.file);
  const { header, keys } = await readSubjectKeyBackup(file);
  const ageDays = ((options.now?.() ?? new Date()).getTime() - Date.parse(header.createdAt)) / DAY_MS;
  if (ageDays > options.keepDays && !options.forceExpired) {
    throw new SubjectKeyRefusal(
      `${file} was made ${header.createdAt}, more than ${options.keepDays} days ago (the key-store backups' retention): ` +
        'an erasure made since may hold only because such a backup is gone. Restore a newer one, or pass --force-expired ' +
        "if this is the only one left (the log's erasures are applied again after it).",
    );
  }
  const known = new Set([options.wrapping.masterKeyId, options.wrapping.previousMasterKeyId].filter(Boolean));
  const foreign = new Set<string>();
  for (const key of keys)
    if (key.state === 'active' && !known.has(options.wrapping.wrappedBy(key.wrappedKey) ?? '')) foreign.add(key.subject);
  if (foreign.size > 0) {
    const digests = [
      ...new Set(keys.flatMap((key) => (key.state === 'active' ? [options.wrapping.wrappedBy(key.wrappedKey) ?? '?'] : []))),
    ];
    throw new SubjectKeyRefusal(
      `${file} holds ${foreign.size} key(s) wrapped by a master key that is not configured (the backup's keys name ${digests.join(', ')}; ` +
        `the configured master key is ${options.wrapping.masterKeyId}${options.wrapping.previousMasterKeyId ? `, the previous one ${options.wrapping.previousMasterKeyId}` : ''}): ` +
        'set SUBJECT_KEYS_MASTER_KEY (or SUBJECT_KEYS_PREVIOUS_MASTER_KEY during a rotation) to the key that wrapped them, then restore again.',
    );
  }
  const report: SubjectKeyRestoreReport = {
    backup: file,
    createdAt: header.createdAt,
    restored: 0,
    alreadyThere: 0,
    destroyedSince: 0,
    tombstones: 0,
    erasuresReapplied: 0,
  };
  for (const key of keys) {
    if (key.state === 'destroyed') {
      await options.store.destroy(key.subject, key.destroyedAt);
      report.tombstones += 1;
      continue;
    }
    const held = await options.store.read(key.subject);
    if (held) {
      report[held.state === 'destroyed' ? 'destroyedSince' : 'alreadyThere'] += 1;
      continue;
    }
    const now = await options.store.getOrCreate(key.subject, { wrappedKey: key.wrappedKey, createdAt: key.createdAt });
    report[now.state === 'destroyed' ? 'destroyedSince' : 'restored'] += 1;
  }
  if (options.eventLog) report.erasuresReapplied = await reapplyErasures(options.store, await erasuresInLog(options.eventLog));
  return report;
}

/** A key-store backup read whole: refused when it is not one, or is cut short. */
export async function readSubjectKeyBackup(file: string): Promise<{ header: SubjectKeyBackupHeader; keys: SubjectKey[] }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new SubjectKeyRefusal(`${file} does not exist: no key-store backup to restore`);
    throw error;
  }
  const lines = text.split('\n').filter((line) => line !== '');
  const parsed = lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  });
  const header = parsed[0];
  if (!isHeader(header))
    throw new SubjectKeyRefusal(`${file} is not a key-store backup made by subject-keys backup (its first line says otherwise)`);
  const end = parsed[parsed.length - 1];
  const keys = parsed.slice(1, -1);
  if (end?.end !== true || end.subjects !== keys.length || !keys.every(isSubjectKey)) {
    throw new SubjectKeyRefusal(
      `${file} is not a whole key-store backup: it is cut short or damaged (no closing line, or its count differs)`,
    );
  }
  return { header, keys: keys as unknown as SubjectKey[] };
}

async function headerOf(path: string): Promise<SubjectKeyBackupHeader | undefined> {
  const file = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await file.read({ buffer: Buffer.alloc(4096), position: 0 });
    const header = JSON.parse(buffer.subarray(0, bytesRead).toString('utf8').split('\n')[0] ?? '') as unknown;
    return isHeader(header) ? header : undefined;
  } finally {
    await file.close();
  }
}

function isHeader(value: unknown): value is SubjectKeyBackupHeader {
  if (typeof value !== 'object' || value === null) return false;
  const { format, version, createdAt, masterKeyId } = value as Record<string, unknown>;
  return (
    format === SUBJECT_KEY_BACKUP_FORMAT &&
    version === SUBJECT_KEY_BACKUP_VERSION &&
    typeof createdAt === 'string' &&
    !Number.isNaN(Date.parse(createdAt)) &&
    typeof masterKeyId === 'string'
  );
}

function isSubjectKey(value: unknown): value is SubjectKey {
  if (typeof value !== 'object' || value === null) return false;
  const key = value as Record<string, unknown>;
  if (typeof key.subject !== 'string') return false;
  if (key.state === 'destroyed') return typeof key.destroyedAt === 'string';
  return key.state === 'active' && typeof key.wrappedKey === 'string' && typeof key.createdAt === 'string';
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(join(dir, '.'), 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The retention in days, from an option or else a variable (whichever says it), checked: a whole
 * number within the bounds, or an error naming where it came from.
 */
export function subjectKeyBackupRetention(option: string | undefined, env: NodeJS.ProcessEnv): number {
  const [name, value] =
    option !== undefined ? ['--keep-days', option] : ['SUBJECT_KEYS_BACKUP_RETENTION_DAYS', env.SUBJECT_KEYS_BACKUP_RETENTION_DAYS];
  if (value === undefined || value === '') return SUBJECT_KEY_BACKUP_RETENTION_DAYS;
  const days = Number(value);
  const { min, max } = SUBJECT_KEY_BACKUP_RETENTION_BOUNDS;
  if (!/^\d+$/.test(value.trim()) || days < min || days > max) {
    throw new SubjectKeyRefusal(
      `${name}: must be a whole number of days from ${min} to ${max} (the key-store backups' retention), not ${JSON.stringify(value)}`,
    );
  }
  return days;
}
