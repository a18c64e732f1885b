import type { SQLInputValue } from 'node:sqlite';
import type { AccessBatch } from './access-log-batch';
import { CHANGES, insertMany } from './access-log-tables';

/** Records inserted by one statement (the rest of a batch row by row). */
const INSERT_CHUNK = 32;

const STATEMENTS = {
  insertOne: `${CHANGES.insert} RETURNING id`,
  insertChunk: `${insertMany(INSERT_CHUNK)} RETURNING id`,
  count: CHANGES.countReadsAndRefusals,
  noteLastUse: CHANGES.noteLastUse,
};

/** What writeAccessBatch needs of a connection: prepared statements, reused. */
export interface BatchConnection {
  prepare(sql: string): { all(...values: SQLInputValue[]): unknown[]; run(...values: SQLInputValue[]): unknown };
}

/**
 * Inserts the batch's records and adds the new ones, and only those, to their minutes and hours and
 * their Client IDs' last use: a record added twice (a batch published again) is kept and counted
 * once. Within the caller's transaction. An insert answers with the ids it inserted (RETURNING),
 * INSERT_CHUNK rows a statement.
 *
 * Nothing but SQL, in a module that imports nothing but the statements: the access log's writer
 * thread (access-log-worker.ts) loads it, and loading the domain and its schemas there
 * (access-log-batch.ts) would slow the thread's start and grow its memory for nothing.
 */
export function writeAccessBatch(connection: BatchConnection, batch: AccessBatch): void {
  const inserted = new Set<unknown>();
  const insertedBy = (sql: string, values: SQLInputValue[]) => {
    for (const row of connection.prepare(sql).all(...values)) inserted.add((row as { id: unknown }).id);
  };
  let from = 0;
  for (; from + INSERT_CHUNK <= batch.rows.length; from += INSERT_CHUNK) {
    insertedBy(STATEMENTS.insertChunk, batch.rows.slice(from, from + INSERT_CHUNK).flat());
  }
  for (; from < batch.rows.length; from += 1) insertedBy(STATEMENTS.insertOne, batch.rows[from]!);

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
  const countStatement = connection.prepare(STATEMENTS.count);
  for (const { clientId, grain, start, reads, refusals } of buckets.values()) countStatement.run(clientId, grain, start, reads, refusals);
  const noteLastUse = connection.prepare(STATEMENTS.noteLastUse);
  for (const [clientId, at] of lastUses) noteLastUse.run(clientId, at);
}
