import type { StatementSync } from 'node:sqlite';

// The access-log database's tables and statements (sqlite-access-log.ts): shared with the import of
// an earlier version's files, and named so that a test can check that each goes through an index.
//
// - `access_log`: a row per record, keyed by (Client ID, `at`, request id, id), the order of a page
//   (decision 21), so that a page is one range of the key read backwards; a record added twice has
//   the same key and is kept once. No other index: the prune goes Client ID by Client ID along the
//   key, and an index on `at` would add a large share to every insert.
// - `access_usage`: the successful reads and the refusals of each (Client ID, minute) and (Client ID,
//   hour); the index on `start` serves the prune. `refusals` came later (decision 38's chart): a
//   database from before has it added, at 0, when it is opened. So has `access_log` its
//   `certificate` (decision 55: a certificate fetch's date and format, as JSON; null for other reads).
// - `access_last_use`: each Client ID's latest successful read, kept when its buckets are pruned.

/**
 * A page's read: one Client ID's range of the key, backwards, beyond a position when given; `from` and
 * `to` narrow the range of `at`, status and address are checked on the rows it reads (decision 54).
 */
export function pageQuery(conditions: readonly string[]): string {
  return `SELECT id, at, request_id, resource, status, code, client_address, certificate FROM access_log
    WHERE ${['client_id = ?', ...conditions].join(' AND ')} ORDER BY at DESC, request_id DESC, id DESC LIMIT ?`;
}

/** The reads. */
export const QUERIES = {
  page: pageQuery([]),
  pageAfter: pageQuery(['(at, request_id, id) < (?, ?, ?)']),
  pageFiltered: pageQuery([
    '(at, request_id, id) < (?, ?, ?)',
    'at >= ?',
    'at < ?',
    'status BETWEEN ? AND ?',
    'client_address = ?',
    'resource = ?',
  ]),
  buckets: 'SELECT start, reads FROM access_usage WHERE client_id = ? AND grain = ? AND start >= ? AND start < ?',
  lastUseOf: 'SELECT last_used_at FROM access_last_use WHERE client_id = ?',
  clientAfter: 'SELECT client_id FROM access_log WHERE client_id > ? ORDER BY client_id LIMIT 1',
  // The hour buckets of one range of the key, in key order (a GROUP BY by day would sort): at most 24 a day.
  dailyReads: `SELECT start, reads, refusals FROM access_usage
    WHERE client_id = ? AND grain = 'hour' AND start >= ? AND start < ? ORDER BY start`,
} as const;

/** The changes. */
export const CHANGES = {
  insert: `INSERT INTO access_log (client_id, at, request_id, id, resource, status, code, client_address, certificate)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  /** Reads only: the import of an earlier version's files, which counted no refusals. */
  count: `INSERT INTO access_usage (client_id, grain, start, reads) VALUES (?, ?, ?, ?)
    ON CONFLICT DO UPDATE SET reads = reads + excluded.reads`,
  countReadsAndRefusals: `INSERT INTO access_usage (client_id, grain, start, reads, refusals) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT DO UPDATE SET reads = reads + excluded.reads, refusals = refusals + excluded.refusals`,
  noteLastUse: `INSERT INTO access_last_use (client_id, last_used_at) VALUES (?, ?)
    ON CONFLICT DO UPDATE SET last_used_at = excluded.last_used_at WHERE excluded.last_used_at > last_used_at`,
  pruneClient: `DELETE FROM access_log WHERE (client_id, at, request_id, id) IN
    (SELECT client_id, at, request_id, id FROM access_log WHERE client_id = ? AND at < ? ORDER BY at LIMIT ?)`,
  pruneUsage: `DELETE FROM access_usage WHERE (client_id, grain, start) IN
    (SELECT client_id, grain, start FROM access_usage WHERE start < ? ORDER BY start LIMIT ?)`,
} as const;

/** Where CHANGES.insert takes a record's client_id, at and id: a batch's row is its values in that order. */
export const ACCESS_ROW = { clientId: 0, at: 1, id: 3 } as const;

/** CHANGES.insert of `rows` records in one statement. */
export function insertMany(rows: number): string {
  const values = Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
  return `INSERT INTO access_log (client_id, at, request_id, id, resource, status, code, client_address, certificate)
    VALUES ${values} ON CONFLICT DO NOTHING`;
}

/** What creating the tables needs of a connection: the store's (`statement`) or the import's raw one (`prepare`). */
export interface SchemaConnection {
  exec(sql: string): void;
  prepare(sql: string): Pick<StatementSync, 'get'>;
}

export function createAccessLogTables(db: SchemaConnection): void {
  db.exec(`CREATE TABLE IF NOT EXISTS access_log (
    client_id TEXT NOT NULL, at TEXT NOT NULL, request_id TEXT NOT NULL, id TEXT NOT NULL,
    resource TEXT NOT NULL, status INTEGER NOT NULL, code TEXT, client_address TEXT, certificate TEXT,
    PRIMARY KEY (client_id, at, request_id, id)
  ) WITHOUT ROWID`);
  // A database from before certificate fetches were described (decision 55): their rows have none.
  if (!db.prepare("SELECT 1 FROM pragma_table_info('access_log') WHERE name = 'certificate'").get()) {
    db.exec('ALTER TABLE access_log ADD COLUMN certificate TEXT');
  }
  db.exec(`CREATE TABLE IF NOT EXISTS access_usage (
    client_id TEXT NOT NULL, grain TEXT NOT NULL, start INTEGER NOT NULL, reads INTEGER NOT NULL,
    PRIMARY KEY (client_id, grain, start)
  ) WITHOUT ROWID`);
  // A database from before refusals were counted: SQLite has no ADD COLUMN IF NOT EXISTS.
  if (!db.prepare("SELECT 1 FROM pragma_table_info('access_usage') WHERE name = 'refusals'").get()) {
    db.exec('ALTER TABLE access_usage ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0');
  }
  db.exec('CREATE INDEX IF NOT EXISTS access_usage_by_start ON access_usage (start)');
  db.exec('CREATE TABLE IF NOT EXISTS access_last_use (client_id TEXT PRIMARY KEY, last_used_at TEXT NOT NULL) WITHOUT ROWID');
}
