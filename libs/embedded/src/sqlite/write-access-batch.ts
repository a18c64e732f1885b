import type { SQLInputValue } from 'node:sqlite';
import type { AccessBatch } from './access-batch-text';
import { ACCESS_ROW, CHANGES, insertMany } from './access-log-tables';

/** What a record counts for, as bits of a RecordCount's first number (access-log-batch.ts). */
export const COUNTS = { read: 1, refusal: 2 } as const;

/** Records inserted by one statement (the rest of a batch row by row). */
const INSERT_CHUNK = 32;

const STATEMENTS = {
  insert: { chunk: insertMany(INSERT_CHUNK), one: CHANGES.insert },
  insertReturning: { chunk: `${insertMany(INSERT_CHUNK)} RETURNING id`, one: `${CHANGES.insert} RETURNING id` },
  savepoint: {
    begin: ['SAVEPOINT access_batch'],
    keep: ['RELEASE access_batch'],
    undo: ['ROLLBACK TO access_batch', 'RELEASE access_batch'],
  },
  transaction: { begin: [], keep: [], undo: ['ROLLBACK', 'BEGIN IMMEDIATE'] },
  count: CHANGES.countReadsAndRefusals,
  noteLastUse: CHANGES.noteLastUse,
};

/**
 * How the first try is taken back when the batch holds a record already written. `savepoint`: the
 * caller's transaction holds other changes (the store's turn), so the try is made under a savepoint
 * and only it is rolled back. `transaction`: the caller began a transaction for this batch alone (the
 * writer thread), so the whole of it is rolled back and begun again; no savepoint, whose journal of
 * every page the try changes cost about a seventh of the writer thread's time.
 */
export type TakeBack = 'savepoint' | 'transaction';

/** What writeAccessBatch needs of a connection: prepared statements, reused. */
export interface BatchConnection {
  prepare(sql: string): {
    all(...values: SQLInputValue[]): unknown[];
    run(...values: SQLInputValue[]): { changes: number | bigint };
  };
}

/**
 * Inserts the batch's records and adds the new ones, and only those, to their minutes and hours and
 * their Client IDs' last use: a record added twice (a batch published again) is kept and counted
 * once. Within the caller's transaction, INSERT_CHUNK rows a statement.
 *
 * Almost every batch is new records only, so the rows go in first counting only how many were
 * inserted: all of them, and every record counts. Otherwise (a batch published again, or a record
 * twice in one batch) that try is taken back (`takeBack`) and the rows inserted again answering
 * with the ids each statement inserted (RETURNING), which is what tells the new records apart; its
 * result rows cost about as much again as the inserts, which is why it is not the first try.
 *
 * Nothing but SQL, in a module that imports nothing but the statements: the access log's writer
 * thread (access-log-worker.ts) loads it, and loading the domain and its schemas there
 * (access-log-batch.ts) would slow the thread's start and grow its memory for nothing.
 */
export function writeAccessBatch(connection: BatchConnection, batch: AccessBatch, takeBack: TakeBack): void {
  const isNew = insertRows(connection, batch.rows, takeBack);

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
  batch.counts.forEach((count, i) => {
    if (count === 0) return;
    const row = batch.rows[i]!;
    if (!isNew(row[ACCESS_ROW.id] as string)) return;
    const [what, minuteStart, hourStart] = count;
    const clientId = row[ACCESS_ROW.clientId] as string;
    const reads = what & COUNTS.read ? 1 : 0;
    const refusals = what & COUNTS.refusal ? 1 : 0;
    add(clientId, 'minute', minuteStart, reads, refusals);
    add(clientId, 'hour', hourStart, reads, refusals);
    // A read moves its Client ID's last use on to its `at`.
    const at = row[ACCESS_ROW.at] as string;
    if (reads === 1 && at > (lastUses.get(clientId) ?? '')) lastUses.set(clientId, at);
  });
  const countStatement = connection.prepare(STATEMENTS.count);
  for (const { clientId, grain, start, reads, refusals } of buckets.values()) countStatement.run(clientId, grain, start, reads, refusals);
  const noteLastUse = connection.prepare(STATEMENTS.noteLastUse);
  for (const [clientId, at] of lastUses) noteLastUse.run(clientId, at);
}

/**
 * Inserts the rows; answers whether a record's id is one this call inserted, true once per id:
 * the same record twice in one batch is inserted, and counted, once.
 */
function insertRows(connection: BatchConnection, rows: SQLInputValue[][], takeBack: TakeBack): (id: string) => boolean {
  const run = (statements: string[]) => statements.forEach((sql) => connection.prepare(sql).run());
  const { begin, keep, undo } = STATEMENTS[takeBack];
  run(begin);
  let changes = 0;
  inChunks(rows, STATEMENTS.insert, (sql, values) => (changes += Number(connection.prepare(sql).run(...values).changes)));
  if (changes === rows.length) {
    run(keep);
    return () => true;
  }
  run(undo);
  const inserted = new Set<unknown>();
  inChunks(rows, STATEMENTS.insertReturning, (sql, values) => {
    for (const row of connection.prepare(sql).all(...values)) inserted.add((row as { id: unknown }).id);
  });
  return (id) => inserted.delete(id);
}

/** The rows INSERT_CHUNK at a time with `sql.chunk`, the rest one by one with `sql.one`. */
function inChunks(
  rows: SQLInputValue[][],
  sql: { chunk: string; one: string },
  insert: (sql: string, values: SQLInputValue[]) => void,
): void {
  let from = 0;
  for (; from + INSERT_CHUNK <= rows.length; from += INSERT_CHUNK) insert(sql.chunk, rows.slice(from, from + INSERT_CHUNK).flat());
  for (; from < rows.length; from += 1) insert(sql.one, rows[from]!);
}
