import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeSubjectKeyStoreContract } from '@rsd/testkit';
import { aTempDirectoryPerTest, onATempDatabase } from '../testing/temp-database';
import { productDatabases } from './backup';
import { openSqliteSubjectKeyStore, SUBJECT_KEYS_DATABASE } from './sqlite-subject-key-store';

describeSubjectKeyStoreContract('SQLite', () => onATempDatabase('subject-keys', (file) => openSqliteSubjectKeyStore({ file })));

describe('SQLite subject key store', () => {
  const temp = aTempDirectoryPerTest('subject-keys');

  it('when a key is destroyed, then its bytes are gone from the database file, not left in a free page', async () => {
    const file = join(temp.dir, SUBJECT_KEYS_DATABASE);
    const wrappedKey = `v1.${'k'.repeat(16)}.${'W'.repeat(64)}`;
    const store = openSqliteSubjectKeyStore({ file });
    await store.getOrCreate('organization:acme', { wrappedKey, createdAt: '2026-12-02T10:00:00.000Z' });
    await store.getOrCreate('organization:kept', { wrappedKey: `v1.${'K'.repeat(80)}`, createdAt: '2026-12-02T10:00:00.000Z' });

    await store.destroy('organization:acme', '2026-12-02T11:00:00.000Z');
    await store.close();

    // Any run of the key's characters: a later row may overwrite part of the freed space, never all of it.
    const bytes = await readFile(file, 'latin1');
    expect(bytes).not.toContain('W'.repeat(12));
    expect(bytes).toContain('K'.repeat(80));
  });

  it('when the data directory is backed up, then the key store is not among the databases copied with the log', async () => {
    await writeFile(join(temp.dir, 'rsd.sqlite'), '');
    const store = openSqliteSubjectKeyStore({ file: join(temp.dir, SUBJECT_KEYS_DATABASE) });
    await store.close();

    expect(await productDatabases(temp.dir)).toEqual(['rsd.sqlite']);
  });
});
