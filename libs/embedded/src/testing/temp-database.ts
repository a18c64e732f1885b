import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, type SQLInputValue, type SQLOutputValue } from 'node:sqlite';
import { extract } from 'tar';
import type { AuthorizationStore, EventLog } from '@rsd/ports';
import { openSqliteAuthorizationStore } from '../sqlite/sqlite-authorization-store';
import { openSqliteEventLog } from '../sqlite/sqlite-event-log';

/** The database's name in a test's directory, as in a data directory. */
export const DATABASE = 'rsd.sqlite';

/**
 * A contract suite's fixture: what `open` opens on a database in a new directory, and a cleanup
 * that closes it and removes the directory.
 */
export async function onATempDatabase<T extends { close(): Promise<void> }>(
  name: string,
  open: (file: string) => T | Promise<T>,
): Promise<{ store: T; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `rsd-${name}-`));
  const store = await open(join(dir, DATABASE));
  return {
    store,
    cleanup: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** In a describe block: a new directory for each test (`dir`), removed after it. */
export function aTempDirectoryPerTest(name: string): { readonly dir: string } {
  const current = { dir: '' };
  beforeEach(async () => {
    current.dir = await mkdtemp(join(tmpdir(), `rsd-${name}-`));
  });
  afterEach(async () => {
    await rm(current.dir, { recursive: true, force: true });
  });
  return current;
}

/**
 * In a describe block, for the backup's and the restore's tests: a new directory for each test (`dir`)
 * with a data directory made in it (`dataDir`) and where the backup file goes (`backup`; a test may name
 * another), removed after it.
 */
export function aBackupPerTest(name: string): { readonly dir: string; dataDir: string; backup: string; unpacked(): Promise<string> } {
  const temp = aTempDirectoryPerTest(name);
  const files = {
    get dir() {
      return temp.dir;
    },
    dataDir: '',
    backup: '',
    /** The backup file unpacked, as `tar -xf` would: also the layout of an earlier version's backup directory. */
    async unpacked(): Promise<string> {
      const dir = join(temp.dir, 'unpacked');
      await mkdir(dir);
      await extract({ file: files.backup, cwd: dir, strict: true });
      return dir;
    },
  };
  beforeEach(async () => {
    files.dataDir = join(temp.dir, 'data');
    files.backup = join(temp.dir, 'backup.tar');
    await mkdir(files.dataDir);
  });
  return files;
}

/** In a describe block: a new directory for each test (`dir`, with `file` the database in it), removed after it. */
export function aTempDatabasePerTest(name: string): { readonly dir: string; readonly file: string } {
  const temp = aTempDirectoryPerTest(name);
  return {
    get dir() {
      return temp.dir;
    },
    get file() {
      return join(temp.dir, DATABASE);
    },
  };
}

/** What `read` reads from `file` on a read-only connection of its own, as another process would: only what is committed. */
export function readCommitted<T>(file: string, read: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** The rows `sql` gives on `file`, read as another process would: only what is committed. */
export function rowsOf(file: string, sql: string, ...parameters: SQLInputValue[]): Record<string, SQLOutputValue>[] {
  return readCommitted(file, (db) => db.prepare(sql).all(...parameters));
}

/** What SQLite plans for `sql` (every parameter bound to 1), one step a line. */
export function queryPlan(file: string, sql: string): string[] {
  const parameters = sql
    .split('?')
    .slice(1)
    .map(() => 1);
  return rowsOf(file, `EXPLAIN QUERY PLAN ${sql}`, ...parameters).map((row) => String(row.detail));
}

/**
 * For each statement, the steps that scan one of `tables` without an index or sort in a temporary
 * tree, and whether any step uses an index: `{ name, scans: [], sorts: [], usesIndex: true }` for each
 * statement that reads only what it needs.
 */
export function planFindings(
  file: string,
  statements: Record<string, string>,
  tables: readonly string[],
): { name: string; scans: string[]; sorts: string[]; usesIndex: boolean }[] {
  const scan = new RegExp(`^SCAN (${tables.join('|')})\\b(?! USING)`);
  return Object.entries(statements).map(([name, sql]) => {
    const plan = queryPlan(file, sql);
    return {
      name,
      scans: plan.filter((step) => scan.test(step)),
      sorts: plan.filter((step) => step.includes('TEMP B-TREE')),
      usesIndex: plan.some((step) => /USING (COVERING )?INDEX|USING (INTEGER )?PRIMARY KEY/.test(step)),
    };
  });
}

export interface EmbeddedStores {
  dir: string;
  store: AuthorizationStore;
  eventLog: EventLog;
  close(): Promise<void>;
}

/** The authorization store and the event log of the embedded runtime, in one database in a temp dir. */
export async function openEmbeddedStores(prefix = 'credentials-'): Promise<EmbeddedStores> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const database = join(dir, DATABASE);
  const store = openSqliteAuthorizationStore({ file: database });
  const eventLog = openSqliteEventLog({ file: database });
  const close = async () => {
    await Promise.all([store.close(), eventLog.close()]);
    await rm(dir, { recursive: true, force: true });
  };
  return { dir, store, eventLog, close };
}
