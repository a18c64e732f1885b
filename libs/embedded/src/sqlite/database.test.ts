import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openEmbeddedDatabase, type EmbeddedDatabase } from './database';

describe('the embedded database: one connection, one transaction per turn of the event loop', () => {
  let dir: string;
  let file: string;
  let db: EmbeddedDatabase;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rsd-database-'));
    file = join(dir, 'rsd.sqlite');
    db = openEmbeddedDatabase(file);
    db.exec('CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)');
  });

  afterEach(async () => {
    db.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** What another process would see: only what is committed. */
  function committedNotes(): string[] {
    const other = new DatabaseSync(file, { readOnly: true });
    try {
      return other
        .prepare('SELECT text FROM notes ORDER BY id')
        .all()
        .map((row) => String(row.text));
    } finally {
      other.close();
    }
  }

  const insert = (text: string) => () => db.statement('INSERT INTO notes (text) VALUES (?)').run(text);

  it('when writes are made in one turn, then they commit together after it and each resolves only then', async () => {
    const first = db.write(insert('a'));
    const second = db.write(insert('b'));
    const soon = db.writeSoon(insert('c'));
    expect(soon.changes).toBe(1);
    expect(committedNotes()).toEqual([]);

    await Promise.all([first, second]);

    expect(committedNotes()).toEqual(['a', 'b', 'c']);
  });

  it('when one transaction grew the write-ahead log past 64 MiB, then once it is checkpointed the file is cut back', async () => {
    const page = 'x'.repeat(1000);
    await db.write(() => {
      for (let n = 0; n < 80_000; n += 1) insert(`${n}:${page}`)();
    });
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(64 * 1024 * 1024);

    // SQLite's own checkpoint after a commit: it copies the pages back and lets the log start over.
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
    await db.write(insert('the next write starts the log over'));

    expect(statSync(`${file}-wal`).size).toBeLessThanOrEqual(64 * 1024 * 1024);
  });

  it('when one change of a turn fails, then it alone is undone and the others commit', async () => {
    await db.write(insert('taken'));

    const results = await Promise.allSettled([db.write(insert('a')), db.write(insert('taken')), db.write(insert('b'))]);

    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(committedNotes()).toEqual(['taken', 'a', 'b']);
  });

  it('when the same file is opened twice in a process, then both share the connection and one closing leaves the other working', async () => {
    const second = openEmbeddedDatabase(file);
    second.close();

    await db.write(insert('still open'));

    expect(committedNotes()).toEqual(['still open']);
  });

  it('when a commit has happened, then its listeners are told', async () => {
    let commits = 0;
    db.onCommit(() => (commits += 1));

    await db.write(insert('a'));
    await db.write(insert('b'));

    expect(commits).toBe(2);
  });
});
