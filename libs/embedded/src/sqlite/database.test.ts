import { fdatasync, fstatSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { eventually } from '@rsd/testkit';
import { aTempDatabasePerTest, aTempDirectoryPerTest, rowsOf } from '../testing/temp-database';
import { createCheckpointer } from './checkpointer';
import { connectRaw, openEmbeddedDatabase, type EmbeddedDatabase } from './database';

// The syncs the database makes, counted (node:fs's own exports cannot be spied on).
jest.mock('node:fs', () => {
  const actual = jest.requireActual<typeof import('node:fs')>('node:fs');
  return { ...actual, fdatasync: jest.fn(actual.fdatasync) };
});
const realFdatasync = jest.requireActual<typeof import('node:fs')>('node:fs').fdatasync;

describe('the embedded database: one connection, one transaction per turn of the event loop', () => {
  let db: EmbeddedDatabase;
  // Declared before the directory's: hooks run in the order declared, so the database closes before it is removed.
  afterEach(async () => {
    await db.close();
  });
  const temp = aTempDatabasePerTest('database');

  beforeEach(() => {
    db = openEmbeddedDatabase(temp.file);
    db.exec('CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)');
  });

  /** What another process would see: only what is committed. */
  const committedNotes = (): string[] => rowsOf(temp.file, 'SELECT text FROM notes ORDER BY id').map((row) => String(row.text));

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

  it('when the connection is opened, then its page cache holds at most 16 MiB (a commit that split a page walks all of it)', () => {
    expect(db.statement('PRAGMA cache_size').get()).toEqual({ cache_size: -16_384 });
  });

  it('when one transaction grew the write-ahead log past 64 MiB, then once it is checkpointed the file is cut back', async () => {
    const page = 'x'.repeat(1000);
    await db.write(() => {
      for (let n = 0; n < 80_000; n += 1) insert(`${n}:${page}`)();
    });
    expect(statSync(`${temp.file}-wal`).size).toBeGreaterThan(64 * 1024 * 1024);

    // Once the pages are copied back, the next write starts the log over.
    let next = 0;
    await eventually(
      async () => {
        await db.write(insert(`the next write starts the log over ${next++}`));
        expect(statSync(`${temp.file}-wal`).size).toBeLessThanOrEqual(64 * 1024 * 1024);
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
  });

  it('when commits are made, then a thread of its own copies them into the file while the connection goes on', async () => {
    const page = 'x'.repeat(1000);
    // About 600 pages: far below the 10,000 at which the connection would checkpoint by itself.
    await db.write(() => {
      for (let n = 0; n < 2_000; n += 1) insert(`${n}:${page}`)();
    });

    // Until a checkpoint, the pages are in the write-ahead log and the file keeps its size.
    await eventually(() => expect(statSync(temp.file).size).toBeGreaterThan(2_000 * 1_000));
    expect(committedNotes()).toHaveLength(2_000);
  });

  it('when a commit carries a write someone waits for, then the log is synced before it resolves; one of soon-writes alone is not', async () => {
    const syncs = jest.mocked(fdatasync);
    syncs.mockClear();
    try {
      db.writeSoon(insert('a view: the log rebuilds it'));
      await new Promise((resolve) => setImmediate(resolve));
      expect(committedNotes()).toEqual(['a view: the log rebuilds it']);
      expect(syncs).not.toHaveBeenCalled();

      const durable = db.write(insert('an append: answered only once durable'));
      expect(syncs).not.toHaveBeenCalled();
      await durable;

      expect(syncs).toHaveBeenCalledTimes(1);
      // The descriptor synced is the write-ahead log's: it holds the commit.
      const synced = syncs.mock.calls[0]?.[0] as number;
      expect(fstatSync(synced).ino).toBe(statSync(`${temp.file}-wal`).ino);
    } finally {
      syncs.mockClear();
    }
  });

  it('when a sync is under way, then reads go on meanwhile and the writes committed during it share the next sync', async () => {
    const syncs = jest.mocked(fdatasync);
    syncs.mockClear();
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    // The first sync waits until released, as a slow disk would.
    syncs.mockImplementationOnce((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      void held.then(() => realFdatasync(fd, callback));
    });
    try {
      let firstDone = false;
      const first = db.write(insert('first')).then(() => (firstDone = true));
      await new Promise((resolve) => setImmediate(resolve));
      const second = db.write(insert('second'));
      const third = db.write(insert('third'));
      await new Promise((resolve) => setImmediate(resolve));

      // Committed and readable while the disk works; nobody told yet.
      expect(committedNotes()).toEqual(['first', 'second', 'third']);
      expect(firstDone).toBe(false);
      expect(syncs).toHaveBeenCalledTimes(1);

      release();
      await Promise.all([first, second, third]);
      expect(syncs).toHaveBeenCalledTimes(2);
    } finally {
      syncs.mockClear();
    }
  });

  it('when one change of a turn fails, then it alone is undone and the others commit', async () => {
    await db.write(insert('taken'));

    const results = await Promise.allSettled([db.write(insert('a')), db.write(insert('taken')), db.write(insert('b'))]);

    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(committedNotes()).toEqual(['taken', 'a', 'b']);
  });

  it('when the same file is opened twice in a process, then both share the connection and one closing leaves the other working', async () => {
    const second = openEmbeddedDatabase(temp.file);
    await second.close();

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

describe('the checkpoint thread', () => {
  const temp = aTempDirectoryPerTest('checkpointer');

  /** The Worker constructor, counted: the module object itself (what the checkpointer's compiled import reads from), not an ES namespace copy of it. */
  function countThreads() {
    const workerThreads = createRequire(__filename)('node:worker_threads') as typeof import('node:worker_threads');
    const { Worker } = workerThreads;
    return jest.spyOn(workerThreads, 'Worker').mockImplementation((...args) => new Worker(...args));
  }

  it('checkpoints every database of the process on one thread, which stops with the last checkpointer', async () => {
    // Rows committed into each database's write-ahead log, none copied into the file yet (no automatic checkpoint).
    const files = ['one.sqlite', 'two.sqlite'].map((name) => `${temp.dir}/${name}`);
    const connections = files.map((file) => {
      const db = connectRaw(file);
      db.exec('PRAGMA wal_autocheckpoint = 0; CREATE TABLE notes (text TEXT NOT NULL)');
      return db;
    });
    const write = (index: number) => connections[index]!.prepare('INSERT INTO notes VALUES (?)').run('x'.repeat(200_000));
    const fileSizes = () => files.map((file) => statSync(file).size);
    const threads = countThreads();
    const checkpointers = files.map((file) => createCheckpointer({ file, busyTimeoutMs: 1_000, pauseMs: 0, onFailure: () => undefined }));
    try {
      write(0);
      write(1);
      const before = fileSizes();
      for (const checkpointer of checkpointers) checkpointer.nudge();
      await eventually(() => fileSizes().forEach((size, index) => expect(size).toBeGreaterThan(before[index]! + 100_000)));
      expect(threads).toHaveBeenCalledTimes(1);

      // One stops; the thread goes on checkpointing the other's database.
      await checkpointers[0]!.stop();
      write(1);
      const [, second] = fileSizes();
      checkpointers[1]!.nudge();
      await eventually(() => expect(fileSizes()[1]).toBeGreaterThan(second! + 100_000));
      expect(threads).toHaveBeenCalledTimes(1);

      // The last one stops the thread: a checkpointer after that starts another.
      await checkpointers[1]!.stop();
      const later = createCheckpointer({ file: files[0]!, busyTimeoutMs: 1_000, pauseMs: 0, onFailure: () => undefined });
      write(0);
      const [first] = fileSizes();
      later.nudge();
      await eventually(() => expect(fileSizes()[0]).toBeGreaterThan(first! + 100_000));
      expect(threads).toHaveBeenCalledTimes(2);
      await later.stop();
    } finally {
      threads.mockRestore();
      for (const checkpointer of checkpointers) await checkpointer.stop();
      for (const db of connections) db.close();
    }
  });

  it('when it cannot open the database, then its owner is told once, and nudges after that do nothing', async () => {
    const failures: string[] = [];
    // A directory is no database: the thread's connection fails to open.
    const checkpointer = createCheckpointer({
      file: temp.dir,
      busyTimeoutMs: 100,
      pauseMs: 0,
      onFailure: (message) => failures.push(message),
    });
    // A nudge that did anything would start a thread, synchronously: counted, nothing needs waiting out.
    const threads = countThreads();
    try {
      checkpointer.nudge();
      await eventually(() => expect(failures).toHaveLength(1));
      expect(threads).toHaveBeenCalledTimes(1);
      checkpointer.nudge();
      checkpointer.nudge();
      expect(threads).toHaveBeenCalledTimes(1);
      expect(failures).toHaveLength(1);
    } finally {
      threads.mockRestore();
      await checkpointer.stop();
    }
  });
});
