import type { DestroyedSubjectKey, SubjectKey, SubjectKeyStore } from '@rsd/ports';
import { text } from './database';
import { openStoreDatabase } from './store-database';

/**
 * The subject key store's database in a data directory. Not `*.sqlite`, so `rsd backup` (which copies
 * the `*.sqlite` databases) never puts the keys in the same archive as the log they open: the keys
 * are backed up apart, with a retention of their own (docs/operators/data-protection.md).
 */
export const SUBJECT_KEYS_DATABASE = 'subject-keys.db';

/**
 * Decision 56's subject keys in a SQLite database of their own, apart from the event log: one row per
 * subject, its wrapped key, or none once destroyed. `secure_delete` makes SQLite overwrite a deleted
 * row's bytes with zeros, so a destroyed key does not linger in a free page of the file.
 */
export function openSqliteSubjectKeyStore(options: { file: string }): SubjectKeyStore {
  const { statement, read, write, close } = openStoreDatabase(options.file, 'the subject key store', (db) =>
    db.exec(`PRAGMA secure_delete = ON;
      CREATE TABLE IF NOT EXISTS subject_keys (
        subject TEXT PRIMARY KEY,
        wrapped_key TEXT,
        created_at TEXT,
        destroyed_at TEXT,
        CHECK ((wrapped_key IS NULL) = (destroyed_at IS NOT NULL))
      ) WITHOUT ROWID;`),
  );
  const select = (subject: string): SubjectKey | undefined => {
    const row = statement('SELECT subject, wrapped_key, created_at, destroyed_at FROM subject_keys WHERE subject = ?').get(subject);
    return row ? subjectKeyOf(row) : undefined;
  };
  return {
    getOrCreate(subject, candidate) {
      return write(() => {
        statement('INSERT INTO subject_keys (subject, wrapped_key, created_at) VALUES (?, ?, ?) ON CONFLICT (subject) DO NOTHING').run(
          subject,
          candidate.wrappedKey,
          candidate.createdAt,
        );
        return select(subject) as SubjectKey;
      });
    },
    read: (subject) => read(() => select(subject)),
    destroy(subject, at) {
      return write(() => {
        // A delete, not an update, so that secure_delete zeroes the whole row, the key with it.
        statement('DELETE FROM subject_keys WHERE subject = ? AND destroyed_at IS NULL').run(subject);
        statement('INSERT INTO subject_keys (subject, destroyed_at) VALUES (?, ?) ON CONFLICT (subject) DO NOTHING').run(subject, at);
        return select(subject) as DestroyedSubjectKey;
      });
    },
    list: (after, limit) =>
      read(() =>
        statement('SELECT subject, wrapped_key, created_at, destroyed_at FROM subject_keys WHERE subject > ? ORDER BY subject LIMIT ?')
          .all(after ?? '', limit)
          .map(subjectKeyOf),
      ),
    rewrap: (subject, from, to) =>
      write(
        () =>
          Number(
            statement('UPDATE subject_keys SET wrapped_key = ? WHERE subject = ? AND wrapped_key = ? AND destroyed_at IS NULL').run(
              to,
              subject,
              from,
            ).changes,
          ) === 1,
      ),
    close,
  };
}

/** A row of `subject_keys` as the port's key or tombstone. */
export function subjectKeyOf(row: Record<string, unknown>): SubjectKey {
  const subject = text(row.subject);
  return row.destroyed_at === null
    ? { state: 'active', subject, wrappedKey: text(row.wrapped_key), createdAt: text(row.created_at) }
    : { state: 'destroyed', subject, destroyedAt: text(row.destroyed_at) };
}
