import type { SQLInputValue } from 'node:sqlite';
import type { AccessRecord } from '@rsd/contracts';
import { bucketStart, countsAsRefusal, countsAsUse } from '@rsd/domain';
import { CHANGES, insertMany } from './access-log-tables';

/**
 * A batch of access records ready to write: their columns, and what each one adds to the usage
 * counts if it turns out to be new. Everything the domain decides is decided here, on the event
 * loop's thread, so that writing it (writeAccessBatch) needs nothing but SQL: it runs on the
 * access log's writer thread (access-log-writer.ts) as well as in the store.
 */
export interface AccessBatch {
  /** CHANGES.insert's columns, one array per record. */
  rows: SQLInputValue[][];
  /** Per record, in the same order: what it counts for, or null when it counts for nothing (a 304, a 5xx). */
  counts: (RecordCount | null)[];
}

interface RecordCount {
  id: string;
  clientId: string;
  minuteStart: number;
  hourStart: number;
  reads: 0 | 1;
  refusals: 0 | 1;
  /** The record's `at`, when it is a successful read: the Client ID's last use moves on to it. */
  usedAt: string | null;
}

/** The statements writeAccessBatch runs, handed to it so that its source needs nothing from outside. */
export interface AccessBatchStatements {
  insertOne: string;
  insertChunk: string;
  chunk: number;
  count: string;
  noteLastUse: string;
}

/** Records inserted by one statement (the rest of a batch row by row). */
const INSERT_CHUNK = 32;

export const ACCESS_BATCH_STATEMENTS: AccessBatchStatements = {
  insertOne: `${CHANGES.insert} RETURNING id`,
  insertChunk: `${insertMany(INSERT_CHUNK)} RETURNING id`,
  chunk: INSERT_CHUNK,
  count: CHANGES.countReadsAndRefusals,
  noteLastUse: CHANGES.noteLastUse,
};

export function accessBatchOf(records: readonly AccessRecord[]): AccessBatch {
  return {
    rows: records.map(({ clientId, at, requestId, id, resource, status, code, clientAddress }) => [
      clientId,
      at,
      requestId,
      id,
      resource,
      status,
      code,
      clientAddress,
    ]),
    counts: records.map(({ id, clientId, at, resource, status }): RecordCount | null => {
      const reads = countsAsUse({ resource, status }) ? 1 : 0;
      const refusals = countsAsRefusal({ resource, status }) ? 1 : 0;
      if (reads + refusals === 0) return null;
      // `at` is one fixed ISO form: its first 16 characters name its minute.
      const minuteStart = Date.parse(`${at.slice(0, 16)}:00.000Z`);
      return { id, clientId, minuteStart, hourStart: bucketStart('hour', minuteStart), reads, refusals, usedAt: reads === 1 ? at : null };
    }),
  };
}

/** What writeAccessBatch needs of a connection: prepared statements, reused. */
export interface BatchConnection {
  prepare(sql: string): { all(...values: SQLInputValue[]): unknown[]; run(...values: SQLInputValue[]): unknown };
}

/**
 * Inserts the batch's records and adds the new ones, and only those, to their minutes and hours and
 * their Client IDs' last use: a record added twice (a batch published again) is kept and counted
 * once. Within the caller's transaction. An insert answers with the ids it inserted (RETURNING),
 * `chunk` rows a statement.
 *
 * Self-contained on purpose: the writer thread runs its source (Function.prototype.toString), so it
 * may use nothing but its arguments and the language.
 */
export function writeAccessBatch(connection: BatchConnection, batch: AccessBatch, statements: AccessBatchStatements): void {
  const inserted = new Set<unknown>();
  const insertedBy = (sql: string, values: SQLInputValue[]) => {
    for (const row of connection.prepare(sql).all(...values)) inserted.add((row as { id: unknown }).id);
  };
  let from = 0;
  for (; from + statements.chunk <= batch.rows.length; from += statements.chunk) {
    insertedBy(statements.insertChunk, batch.rows.slice(from, from + statements.chunk).flat());
  }
  for (; from < batch.rows.length; from += 1) insertedBy(statements.insertOne, batch.rows[from]!);

  const buckets = new Map<string, { clientId: string; grain: string; start: number; reads: number; refusals: number }>();
  const lastUses = new Map<string, string>();
  const add = (clientId: string, grain: string, start: number, reads: number, refusals: number) => {
    const key = `${clientId} ${grain} ${start}`;
    const bucket = buckets.get(key);
    if (bucket) {
      bucket.reads += reads;
      bucket.refusals += refusals;
    } else buckets.set(key, { clientId, grain, start, reads, refusals });
  };
  for (const count of batch.counts) {
    // Deleted once counted: the same record twice in one batch is inserted, and counted, once.
    if (count === null || !inserted.delete(count.id)) continue;
    add(count.clientId, 'minute', count.minuteStart, count.reads, count.refusals);
    add(count.clientId, 'hour', count.hourStart, count.reads, count.refusals);
    if (count.usedAt !== null && count.usedAt > (lastUses.get(count.clientId) ?? '')) lastUses.set(count.clientId, count.usedAt);
  }
  const countStatement = connection.prepare(statements.count);
  for (const { clientId, grain, start, reads, refusals } of buckets.values()) countStatement.run(clientId, grain, start, reads, refusals);
  const noteLastUse = connection.prepare(statements.noteLastUse);
  for (const [clientId, at] of lastUses) noteLastUse.run(clientId, at);
}
