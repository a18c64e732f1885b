import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { erasuresInLog, maintainSubjectKeys, reapplyErasures, SubjectKeyRefusal, type SubjectKeyMaintenance } from '@rsd/consumers';
import {
  SUBJECT_KEYS_MASTER_KEY,
  SUBJECT_KEYS_MASTER_KEY_SECRET,
  subjectKeyWrapping,
  subjectKeysMasterKey,
  subjectKeysPreviousMasterKey,
} from '@rsd/platform';
import type { EventLog, SubjectKeyStore } from '@rsd/ports';
import { MAIN_DATABASE } from './backup';
import { exists } from './import-earlier-data';
import { openSqliteEventLog } from './sqlite-event-log';
import { openSqliteSubjectKeyStore, SUBJECT_KEYS_DATABASE } from './sqlite-subject-key-store';

/**
 * Decision 56's maintenance of an embedded data directory's subject key store (`rsd subject-keys`):
 * its backups, their restore, and the master key's rotation, the same work as the distributed
 * runtime's tasks (@rsd/consumers), on `DATA_DIR/subject-keys.db` and the log of `DATA_DIR/rsd.sqlite`.
 * Also while the product serves: SQLite lets both write, one at a time. The master key is
 * SUBJECT_KEYS_MASTER_KEY (or `_FILE`), else the data directory's file, never made here: a key made by a
 * maintenance command would open nothing.
 */
export async function runDataDirectorySubjectKeys(
  maintenance: SubjectKeyMaintenance,
  { dataDir, env }: { dataDir: string; env: NodeJS.ProcessEnv },
): Promise<unknown> {
  const storeFile = join(dataDir, SUBJECT_KEYS_DATABASE);
  const logFile = join(dataDir, MAIN_DATABASE);
  let store: SubjectKeyStore | undefined;
  let eventLog: EventLog | undefined;
  try {
    return await maintainSubjectKeys(maintenance, env, async () => {
      if (maintenance.command !== 'restore' && !(await exists(storeFile))) {
        throw new SubjectKeyRefusal(
          `${storeFile} does not exist: no subject key store in ${dataDir} (the product makes it at its first start)`,
        );
      }
      const wrapping = subjectKeyWrapping(await dataDirectoryMasterKey(dataDir, env), subjectKeysPreviousMasterKey(env));
      // A directory whose log is not restored yet has no erasures to apply: `rsd restore` applies them as it puts the log in place.
      if (maintenance.command !== 'backup' && (await exists(logFile))) eventLog = openSqliteEventLog({ file: logFile });
      store = openSqliteSubjectKeyStore({ file: storeFile });
      return { store, wrapping, eventLog };
    });
  } finally {
    await store?.close();
    await eventLog?.close();
  }
}

/** SUBJECT_KEYS_MASTER_KEY (or `_FILE`), else the data directory's file; refused when neither is there. */
async function dataDirectoryMasterKey(dataDir: string, env: NodeJS.ProcessEnv): Promise<Buffer> {
  const masterKeyFile = join(dataDir, SUBJECT_KEYS_MASTER_KEY_SECRET.file);
  const configured = env[SUBJECT_KEYS_MASTER_KEY] || env[`${SUBJECT_KEYS_MASTER_KEY}_FILE`];
  const masterKey = configured ? subjectKeysMasterKey(env) : await masterKeyIn(masterKeyFile);
  if (!masterKey) {
    throw new SubjectKeyRefusal(
      `the master key is neither in ${masterKeyFile} nor in ${SUBJECT_KEYS_MASTER_KEY}: copy the product's ${SUBJECT_KEYS_MASTER_KEY_SECRET.file} ` +
        `(mode 0600) into ${dataDir}, or set ${SUBJECT_KEYS_MASTER_KEY}`,
    );
  }
  return masterKey;
}

/**
 * Every erasure the data directory's log records applied again to its key store (a restore of the
 * log with a key store from its own backup): answers how many keys it destroyed.
 */
export async function reapplyLogErasures(dataDir: string): Promise<number> {
  const eventLog = openSqliteEventLog({ file: join(dataDir, MAIN_DATABASE) });
  const store = openSqliteSubjectKeyStore({ file: join(dataDir, SUBJECT_KEYS_DATABASE) });
  try {
    return await reapplyErasures(store, await erasuresInLog(eventLog));
  } finally {
    await store.close();
    await eventLog.close();
  }
}

/** The master key in its file of a data directory; undefined when there is none. */
export async function masterKeyIn(file: string): Promise<Buffer | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return subjectKeysMasterKey({ [SUBJECT_KEYS_MASTER_KEY]: text.trim() });
}
