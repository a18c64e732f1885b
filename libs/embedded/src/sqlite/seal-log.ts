import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { noRewrites, rewrites, rewrittenValue, type RewriteCounts } from '@rsd/consumers';
import { TOPICS } from '@rsd/contracts';
import {
  SUBJECT_KEYS_MASTER_KEY,
  SUBJECT_KEYS_MASTER_KEY_SECRET,
  subjectCipher,
  type SealedValue,
  type SubjectCipher,
} from '@rsd/platform';
import { MAIN_DATABASE } from './backup';
import { exists } from './import-earlier-data';
import { masterKeyIn } from './data-directory-subject-keys';
import { databasesInUse, sealedSubjectsIn, subjectsNotOpening } from './restore';
import { openSqliteSubjectKeyStore, SUBJECT_KEYS_DATABASE } from './sqlite-subject-key-store';

export interface SealEmbeddedLogOptions {
  /** DATA_DIR of a stopped product. */
  dataDir: string;
  /** SUBJECT_KEYS_MASTER_KEY where it is configured (it wins over the file, as in the product). */
  configuredSubjectKeysMasterKey?: Buffer;
  /** Records read, sealed and written back in one transaction. */
  batchSize?: number;
  /** A line of progress (stderr). */
  progress?: (line: string) => void;
  /** Tests: stop (as a crash would) once this many batches are committed, before anything else. */
  stopAfterBatches?: number;
}

export interface SealEmbeddedLogReport {
  dataDir: string;
  records: number;
  /** What was done, per topic of the log. */
  topics: Record<string, RewriteCounts>;
  /** Where the records that could not be sealed are (`topic@seq`), the first ten. */
  unsealable: string[];
  /** Whether the file was rewritten without its free pages (VACUUM): after a run that sealed anything, or with free pages left. */
  vacuumed: boolean;
  seconds: number;
}

const DEFAULT_BATCH = 500;
const SQLITE_BUSY = 5;

/**
 * `rsd seal-log` (decision 56): every event of an embedded log written before sealing, rewritten in
 * place into its sealed form (`rewrittenValue`, the same `sealValue` as the log's door), with the
 * product stopped. A record keeps its row (`seq`), so every consumer's position stays valid. Batches
 * of `batchSize` records are sealed, then written in one transaction: an interrupted run loses
 * nothing, and the next one passes what is sealed already and goes on (a run after a complete one
 * changes nothing). `secure_delete` zeroes each replaced value's bytes, and a VACUUM then rewrites the
 * file without its free pages (what deleted rows left there in clear, the outbox's among them), the
 * write-ahead log truncated after: the file holds none of the clear values.
 *
 * Refuses before it changes anything when the directory holds no log, when a process has its
 * databases open (the product, a rebuild: `databasesInUse`, and the lock is then kept for the whole
 * run, so none can start meanwhile), when the master key is not there (SUBJECT_KEYS_MASTER_KEY, else
 * DATA_DIR/subject-keys-master.key: the product makes it at its first start), and when the key store
 * and the master key do not open a sealed value of each subject the log already names (another
 * master key, a key store lost or replaced: sealing with them would make keys no product opens).
 */
export async function sealEmbeddedLog(options: SealEmbeddedLogOptions): Promise<SealEmbeddedLogReport> {
  const started = Date.now();
  const dataDir = resolve(options.dataDir);
  const file = join(dataDir, MAIN_DATABASE);
  const progress = options.progress ?? (() => undefined);
  if (!(await exists(file))) throw new Error(`${dataDir} holds no ${MAIN_DATABASE}: is it the product's data directory (DATA_DIR)?`);
  const inUse = await databasesInUse(dataDir);
  if (inUse.length > 0) {
    throw new Error(
      `${dataDir} is in use: a process (the product, or a rebuild of its views) has ${inUse.join(', ')} open. ` +
        'Stop it before sealing its log: the log is rewritten with the product stopped.',
    );
  }
  const masterKeyFile = join(dataDir, SUBJECT_KEYS_MASTER_KEY_SECRET.file);
  const masterKey = options.configuredSubjectKeysMasterKey ?? (await masterKeyIn(masterKeyFile));
  if (!masterKey) {
    throw new Error(
      `The master key is neither in ${masterKeyFile} nor in ${SUBJECT_KEYS_MASTER_KEY}: set ${SUBJECT_KEYS_MASTER_KEY} as the product has it, ` +
        'or start the product of this version once on the directory (it makes the master key and the key store), stop it, and run this again.',
    );
  }
  const db = lockedDatabase(file, dataDir);
  const keyStoreFile = join(dataDir, SUBJECT_KEYS_DATABASE);
  const subjects = sealedSubjectsIn(db);
  if (subjects.size > 0 && !(await exists(keyStoreFile))) {
    db.close();
    throw new Error(
      `The log holds values sealed for ${subjects.size} data subject(s) and there is no key store at ${keyStoreFile}: ` +
        'put back the one the product used; sealing the rest under new keys beside lost ones would help nobody. Nothing was rewritten.',
    );
  }
  const store = openSqliteSubjectKeyStore({ file: keyStoreFile });
  try {
    const cipher = subjectCipher({ store, masterKey });
    await checkKeysOpen(subjects, cipher);
    const topics: Record<string, RewriteCounts> = {};
    const unsealable: string[] = [];
    const batchSize = options.batchSize ?? DEFAULT_BATCH;
    const hasLog = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get() !== undefined;
    const total = hasLog ? Number(db.prepare('SELECT COUNT(*) AS n FROM events').get()?.n ?? 0) : 0;
    let records = 0;
    let sealedNow = 0;
    let batches = 0;
    for (let after = 0; hasLog;) {
      const rows = db.prepare('SELECT seq, topic, value FROM events WHERE seq > ? ORDER BY seq LIMIT ?').all(after, batchSize) as {
        seq: number;
        topic: string;
        value: string;
      }[];
      if (rows.length === 0) break;
      const changed: { seq: number; value: string }[] = [];
      for (const { seq, topic, value } of rows) {
        const { outcome, value: rewritten } = await rewrittenValue(value, cipher, { deadLetter: topic === TOPICS.deadLetter });
        (topics[topic] ??= noRewrites())[outcome] += 1;
        if (outcome === 'unsealable' && unsealable.length < 10) unsealable.push(`${topic}@${seq}`);
        if (rewrites(outcome)) changed.push({ seq, value: rewritten });
      }
      if (changed.length > 0) {
        db.exec('BEGIN IMMEDIATE');
        try {
          const update = db.prepare('UPDATE events SET value = ? WHERE seq = ?');
          for (const { seq, value } of changed) update.run(value, seq);
          db.exec('COMMIT');
        } catch (error) {
          db.exec('ROLLBACK');
          throw error;
        }
      }
      records += rows.length;
      sealedNow += changed.length;
      after = (rows.at(-1) as { seq: number }).seq;
      progress(`rsd seal-log: ${records} of ${total} records read, ${sealedNow} sealed`);
      batches += 1;
      if (options.stopAfterBatches !== undefined && batches >= options.stopAfterBatches) {
        throw new Error(`stopped after ${batches} batch(es), as asked`);
      }
    }
    const vacuumed = sealedNow > 0 || Number(db.prepare('PRAGMA freelist_count').get()?.freelist_count ?? 0) > 0;
    if (vacuumed) {
      progress('rsd seal-log: rewriting the file without its free pages (VACUUM)');
      db.exec('VACUUM');
    }
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    return { dataDir, records, topics, unsealable, vacuumed, seconds: (Date.now() - started) / 1000 };
  } finally {
    db.close();
    await store.close();
  }
}

/**
 * The log's database, locked for this connection alone until it closes (EXCLUSIVE locking mode, its
 * lock taken at once): a product started meanwhile fails to open it instead of reading half a rewrite.
 */
function lockedDatabase(file: string, dataDir: string): DatabaseSync {
  const db = new DatabaseSync(file, { timeout: 0 });
  try {
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('PRAGMA secure_delete = ON');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    return db;
  } catch (error) {
    db.close();
    if ((error as { errcode?: number }).errcode === SQLITE_BUSY) {
      throw new Error(`${dataDir} is in use: a process opened ${MAIN_DATABASE} as the rewrite began. Stop it and run this again.`, {
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * The key store and the master key must open a sealed value of every subject the log names already
 * (a log the product of this version wrote to since its upgrade): otherwise a key store lost, another
 * one or another master key would seal the rest under keys no product opens.
 */
async function checkKeysOpen(subjects: Map<string, SealedValue>, cipher: SubjectCipher): Promise<void> {
  const unopened = await subjectsNotOpening(subjects, cipher);
  if (unopened.size === 0) return;
  const which = [...unopened].map(([problem, names]) => `${names.length} with ${problem} (${names.slice(0, 3).join(', ')})`);
  throw new Error(
    `The log holds values sealed for ${subjects.size} data subject(s), and the key store and the master key` +
      ` do not open ${which.join('; ')}. Give the master key the product uses (${SUBJECT_KEYS_MASTER_KEY}) and its own ` +
      `${SUBJECT_KEYS_DATABASE}; nothing was rewritten.`,
  );
}
