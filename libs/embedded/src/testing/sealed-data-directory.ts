import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sealValue } from '@rsd/consumers';
import { EVENT_TYPES, TOPICS } from '@rsd/contracts';
import { SUBJECT_KEYS_MASTER_KEY_SECRET, subjectCipher } from '@rsd/platform';
import { openEmbeddedDatabase } from '../sqlite/database';
import { createLogTables } from '../sqlite/sqlite-event-log';
import { openSqliteSubjectKeyStore, SUBJECT_KEYS_DATABASE } from '../sqlite/sqlite-subject-key-store';

/** The master key the sealed data directories of the tests are made with (32 bytes). */
export const TEST_SUBJECT_KEYS_MASTER_KEY = Buffer.alloc(32, 7);

/**
 * A data directory as the product leaves it with sealing on (decision 56): its log (`rsd.sqlite`) holds
 * one score event of each organization sealed under `organization:<id>`, and a plain record; its key
 * store (`subject-keys.db`) and master key file (`subject-keys-master.key`) beside it. Answers the
 * key store's and the master key's files.
 */
export async function aSealedDataDirectory(
  dataDir: string,
  organizations: readonly string[],
  masterKey: Buffer = TEST_SUBJECT_KEYS_MASTER_KEY,
): Promise<{ keyStore: string; masterKeyFile: string }> {
  await mkdir(dataDir, { recursive: true });
  const keyStore = join(dataDir, SUBJECT_KEYS_DATABASE);
  const store = openSqliteSubjectKeyStore({ file: keyStore });
  const db = openEmbeddedDatabase(join(dataDir, 'rsd.sqlite'));
  try {
    createLogTables(db);
    const cipher = subjectCipher({ store, masterKey });
    const append = (topic: string, key: string, value: string) =>
      db.write(() => db.statement('INSERT INTO events (topic, key, value) VALUES (?, ?, ?)').run(topic, key, value));
    for (const organizationId of organizations) {
      const event = {
        specversion: '1.0',
        id: randomUUID(),
        type: EVENT_TYPES.scoreCalculated,
        data: { organizationId, score: 72, grade: 'Strengthen', pillarScores: { structuralIntegrity: 70 } },
      };
      await append(TOPICS.scores, organizationId, await sealValue(JSON.stringify(event), cipher));
    }
    await append(TOPICS.scores, 'dead-letter', 'not JSON: a record the log keeps as it is');
  } finally {
    await db.close();
    await store.close();
  }
  const masterKeyFile = join(dataDir, SUBJECT_KEYS_MASTER_KEY_SECRET.file);
  await writeFile(masterKeyFile, `${masterKey.toString('base64')}\n`, { mode: 0o600 });
  return { keyStore, masterKeyFile };
}
