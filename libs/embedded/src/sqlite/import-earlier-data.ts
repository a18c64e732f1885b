import { createReadStream } from 'node:fs';
import { readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { StoredAuthorization } from '@rsd/domain';
import type { OutboxEntry } from '@rsd/ports';
import type { EmbeddedLogger } from '../embedded-logger';
import { parseLine } from '../earlier-layout';
import { connectRaw, integer } from './database';
import { addToOutbox, columnsOf, createAuthorizationTables, indexImportedExpiryNotices } from './sqlite-authorization-store';
import { createLogTables } from './sqlite-event-log';

/** The files an earlier version kept in the data directory, and the suffix they get once imported. */
export const EARLIER_EVENT_LOG = 'events.ndjson';
export const EARLIER_AUTHORIZATIONS = 'authorizations.json';
const IMPORTED_SUFFIX = '.imported';

export type ImportLogger = EmbeddedLogger & { info(details: object, message: string): void };

export interface ImportOptions {
  dataDir: string;
  /** The embedded database the records go to. */
  file: string;
  log: ImportLogger;
}

/**
 * Upgrades a data directory written by an earlier version (an NDJSON event log and one JSON document
 * of authorizations) into the embedded database, once. Each file is imported in one transaction,
 * with a marker row: a crash during the import leaves nothing half-imported, and one after it only
 * the rename to finish. The files are kept, renamed `*.imported`, for the operator to delete.
 */
export async function importEarlierData({ dataDir, file, log }: ImportOptions): Promise<void> {
  const eventLogFile = join(dataDir, EARLIER_EVENT_LOG);
  const authorizationsFile = join(dataDir, EARLIER_AUTHORIZATIONS);
  if (!(await exists(eventLogFile)) && !(await exists(authorizationsFile))) return;

  const db = connectRaw(file);
  try {
    createLogTables(db);
    createAuthorizationTables({ exec: (sql) => db.exec(sql), statement: (sql) => db.prepare(sql) });
    await importOnce(db, eventLogFile, log, () => importEventLog(db, eventLogFile, log));
    await importOnce(db, authorizationsFile, log, () => importAuthorizations(db, authorizationsFile));
    // Decision 44: the imported grants' expiry notices, which the tables' creation above could not index.
    indexImportedExpiryNotices(db);
  } finally {
    db.close();
  }
}

/**
 * Imports `file` (or a directory) in one transaction with a marker row named after it, unless the
 * marker is there already, then renames it `*.imported`.
 */
export async function importOnce(db: DatabaseSync, file: string, log: ImportLogger, load: () => Promise<number>): Promise<void> {
  if (!(await exists(file))) return;
  db.exec('CREATE TABLE IF NOT EXISTS imports (file TEXT PRIMARY KEY, records INTEGER NOT NULL, at TEXT NOT NULL) WITHOUT ROWID');
  const name = file.slice(file.lastIndexOf('/') + 1);
  const done = db.prepare('SELECT records FROM imports WHERE file = ?').get(name);
  if (!done) {
    const started = Date.now();
    // The write lock is held across the reads: nothing else in this process uses the database yet.
    db.exec('BEGIN IMMEDIATE');
    try {
      const records = await load();
      db.prepare('INSERT INTO imports (file, records, at) VALUES (?, ?, ?)').run(name, records, new Date().toISOString());
      db.exec('COMMIT');
      log.info({ file: name, records, seconds: (Date.now() - started) / 1000 }, 'imported a file written by an earlier version');
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }
  await rename(file, `${file}${IMPORTED_SUFFIX}`);
}

/**
 * Streams the log line by line (a log may be far larger than a string or a buffer can hold). As the
 * earlier version read it: a record counts only once its newline is written, so only a last line
 * may be torn, and is left out; anything unreadable before it means the file was damaged some other way.
 */
async function importEventLog(db: DatabaseSync, file: string, log: EmbeddedLogger): Promise<number> {
  const existing = integer(db.prepare('SELECT COUNT(*) AS n FROM (SELECT 1 FROM events LIMIT 1)').get()?.n);
  if (existing > 0) throw new Error(`${EARLIER_EVENT_LOG} sits beside a database that already holds events: move one of them away`);
  const insert = db.prepare('INSERT INTO events (topic, key, value) VALUES (?, ?, ?)');
  let imported = 0;
  let byteOffset = 0;
  let rest: Buffer = Buffer.alloc(0);
  /** Where an unreadable line started: torn if nothing follows it, damage if anything does. */
  let unreadableAt: number | undefined;
  const corrupt = (at: number) => new Error(`event log ${file} is corrupt: unreadable record at byte ${at}`);
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    const data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
    let start = 0;
    for (let end = data.indexOf(0x0a, start); end !== -1; end = data.indexOf(0x0a, start)) {
      if (unreadableAt !== undefined) throw corrupt(unreadableAt);
      const line = parseLine(data.subarray(start, end).toString('utf8'));
      if (line) {
        insert.run(line.topic, line.key, line.value);
        imported += 1;
      } else {
        unreadableAt = byteOffset + start;
      }
      start = end + 1;
    }
    byteOffset += start;
    rest = data.subarray(start);
  }
  if (rest.length > 0 && unreadableAt !== undefined) throw corrupt(unreadableAt);
  const tornAt = unreadableAt ?? (rest.length > 0 ? byteOffset : undefined);
  if (tornAt !== undefined) log.warn({ file, byteOffset: tornAt }, 'left out a torn last record left by a crash');
  return imported;
}

/** The earlier store was one JSON document, which its writer kept under the size a string can hold. */
async function importAuthorizations(db: DatabaseSync, file: string): Promise<number> {
  const document = JSON.parse(await readFile(file, 'utf8')) as {
    authorizations?: { record: StoredAuthorization; outbox: OutboxEntry[] }[];
  };
  if (!Array.isArray(document.authorizations)) throw new Error(`authorization store ${file} is not a store document`);
  const insert = db.prepare(
    `INSERT INTO authorizations (client_id, organization_id, created_at, revision, expires_ms, ended, record)
     VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (client_id) DO NOTHING`,
  );
  for (const { record, outbox } of document.authorizations) {
    insert.run(...columnsOf(record));
    addToOutbox((sql) => db.prepare(sql), record.clientId, outbox);
  }
  return document.authorizations.length;
}

export async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
