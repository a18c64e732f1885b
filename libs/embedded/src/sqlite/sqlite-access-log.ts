import type { SQLInputValue } from 'node:sqlite';
import type { AccessRecord, AccessResource } from '@rsd/contracts';
import {
  bucketStart,
  countsAsRefusal,
  countsAsUse,
  dailyFromHours,
  NO_USAGE,
  USAGE_BUCKET_RETENTION_MS,
  usageBucketRanges,
  usageFrom,
  type BucketRange,
  type UsageBucket,
} from '@rsd/domain';
import type { AccessLog, AccessLogStore } from '@rsd/ports';
import { silentLogger } from '../embedded-logger';
import { integer, text } from './database';
import { openStoreDatabase } from './store-database';
import { CHANGES, createAccessLogTables, insertMany, QUERIES } from './access-log-tables';
import { importEarlierAccessLog } from './import-earlier-access-log';
import type { ImportLogger } from './import-earlier-data';

/** Rows deleted per turn of the event loop, each batch its own commit: a prune never holds the loop for long. */
export const PRUNE_BATCH = 1_000;
/** Records inserted by one statement (the rest of a batch row by row). */
const INSERT_CHUNK = 32;

export interface SqliteAccessLogOptions {
  /** DATA_DIR/access-log.sqlite: a database of its own, apart from the event log's (docs/decisions.md). */
  file: string;
  /** An access-log directory an earlier version wrote (DATA_DIR/access-log): imported once, then renamed `.imported`. */
  importFrom?: string;
  log?: ImportLogger;
}

/**
 * The embedded runtime's access log (decision 21). Publishing writes the store directly: the read
 * API and the credentials service share the process.
 */
export async function openSqliteAccessLog(options: SqliteAccessLogOptions): Promise<AccessLog> {
  if (options.importFrom !== undefined) {
    await importEarlierAccessLog({
      dir: options.importFrom,
      file: options.file,
      log: options.log ?? { ...silentLogger, info: () => undefined },
    });
  }
  const store = openSqliteAccessLogStore({ file: options.file });
  return {
    publish: (records) => store.add(records),
    openStore: () => Promise.resolve(store),
    close: () => store.close(),
  };
}

/**
 * The access log and usage counters in an embedded database (tables: access-log-tables.ts). A page
 * is one range of the table's key, read backwards: it costs the page, not the log. Usage is added to
 * in the transaction that inserts the records, counting only the rows actually inserted, so a
 * record added twice is counted once; a usage answer reads at most 720 hour and 180 minute rows per
 * Client ID, whatever the volume. A prune deletes a bounded batch per turn of the event loop.
 *
 * Writes join the turn's transaction without waiting for its commit, and are never synced by
 * themselves (an access record is not worth a disk flush): a power cut can take the last commits,
 * whole, as the files before could lose what the OS had not written; a killed process loses nothing.
 */
export function openSqliteAccessLogStore(options: { file: string }): AccessLogStore {
  const store = openStoreDatabase(options.file, 'the access log', (db) =>
    createAccessLogTables({ exec: (sql) => db.exec(sql), prepare: (sql) => db.statement(sql) }),
  );
  const { statement, read, changeSoon } = store;

  /** Adds a batch's successful reads and refusals to their minutes and hours, and moves each Client ID's last use on. */
  function count(minutes: Map<string, Counted & { minute: string }>, lastUses: Map<string, string>): void {
    const hours = new Map<string, Counted & { start: number }>();
    const add = statement(CHANGES.countReadsAndRefusals);
    for (const { clientId, minute, reads, refusals } of minutes.values()) {
      const start = Date.parse(`${minute}:00.000Z`);
      add.run(clientId, 'minute', start, reads, refusals);
      const hourStart = bucketStart('hour', start);
      const key = `${clientId} ${hourStart}`;
      const hour = hours.get(key);
      if (hour) {
        hour.reads += reads;
        hour.refusals += refusals;
      } else hours.set(key, { clientId, start: hourStart, reads, refusals });
    }
    for (const { clientId, start, reads, refusals } of hours.values()) add.run(clientId, 'hour', start, reads, refusals);
    const noteLastUse = statement(CHANGES.noteLastUse);
    for (const [clientId, at] of lastUses) noteLastUse.run(clientId, at);
  }

  /**
   * Inserts the records, and says of each whether it is new. INSERT_CHUNK rows go in one statement
   * (a quarter less per row than one statement each: the read API's every read is a row); a chunk
   * that finds a row already there (a batch published again) is undone and inserted row by row, so
   * that only the new rows are known, and counted.
   */
  function insertNew(records: readonly AccessRecord[]): boolean[] {
    const one = statement(CHANGES.insert);
    const chunk = statement(insertMany(INSERT_CHUNK));
    const inserted: boolean[] = [];
    const rowByRow = (from: number, to: number) => {
      for (let index = from; index < to; index += 1) inserted.push(Number(one.run(...columnsOf(records[index]!)).changes) === 1);
    };
    let from = 0;
    for (; from + INSERT_CHUNK <= records.length; from += INSERT_CHUNK) {
      store.database.exec('SAVEPOINT access_chunk');
      const values = records.slice(from, from + INSERT_CHUNK).flatMap(columnsOf);
      if (Number(chunk.run(...values).changes) === INSERT_CHUNK) inserted.push(...Array<boolean>(INSERT_CHUNK).fill(true));
      else {
        store.database.exec('ROLLBACK TO access_chunk');
        rowByRow(from, from + INSERT_CHUNK);
      }
      store.database.exec('RELEASE access_chunk');
    }
    rowByRow(from, records.length);
    return inserted;
  }

  /** Runs `batch` (which deletes at most PRUNE_BATCH rows and says whether more are left) once per turn, each its own commit. */
  async function turnByTurn(batch: () => boolean): Promise<void> {
    while (!store.closed && store.database.changeSoon(batch)) await new Promise((next) => setImmediate(next));
  }

  /**
   * Records older than `before`, Client ID after Client ID in key order: each is one range of the
   * key. Finding the next Client ID is one step in the key, so a prune needs no index of its own
   * that every insert would pay for; a seek that finds nothing to delete counts against the batch too.
   */
  function pruneEntries(before: string): Promise<void> {
    let done = '';
    return turnByTurn(() => {
      for (let budget = PRUNE_BATCH; budget > 0;) {
        const next = statement(QUERIES.clientAfter).get(done);
        if (!next) return false;
        const clientId = text(next.client_id);
        const deleted = Number(statement(CHANGES.pruneClient).run(clientId, before, budget).changes);
        if (deleted < budget) done = clientId;
        budget -= Math.max(deleted, 1);
      }
      return true;
    });
  }

  function pruneUsage(before: number): Promise<void> {
    return turnByTurn(() => Number(statement(CHANGES.pruneUsage).run(before, PRUNE_BATCH).changes) === PRUNE_BATCH);
  }

  return {
    add(records) {
      if (records.length === 0) return read(() => undefined);
      return changeSoon(() => {
        const inserted = insertNew(records);
        const minutes = new Map<string, Counted & { minute: string }>();
        const lastUses = new Map<string, string>();
        for (const [index, { clientId, at, resource, status }] of records.entries()) {
          // Only a row inserted now is counted: a record added again is counted once.
          if (!inserted[index]) continue;
          const read = countsAsUse({ resource, status }) ? 1 : 0;
          const refusal = countsAsRefusal({ resource, status }) ? 1 : 0;
          if (read + refusal === 0) continue;
          // `at` is one fixed ISO form: its first 16 characters name its minute, with no date to parse per record.
          const minute = at.slice(0, 16);
          const key = `${clientId} ${minute}`;
          const counted = minutes.get(key);
          if (counted) {
            counted.reads += read;
            counted.refusals += refusal;
          } else minutes.set(key, { clientId, minute, reads: read, refusals: refusal });
          if (read === 1 && at > (lastUses.get(clientId) ?? '')) lastUses.set(clientId, at);
        }
        count(minutes, lastUses);
      });
    },

    page(clientId, { limit, after }) {
      return read(() => {
        const rows = after
          ? statement(QUERIES.pageAfter).all(clientId, after.at, after.requestId, after.id, limit)
          : statement(QUERIES.page).all(clientId, limit);
        return rows.map((row): AccessRecord => ({
          id: text(row.id),
          clientId,
          at: text(row.at),
          resource: text(row.resource) as AccessResource,
          status: integer(row.status),
          code: textOrNull(row.code),
          clientAddress: textOrNull(row.client_address),
          requestId: text(row.request_id),
        }));
      });
    },

    usage(clientIds, now) {
      return read(() => {
        const ranges = widestRanges(usageBucketRanges(now));
        const buckets = statement(QUERIES.buckets);
        const lastUse = statement(QUERIES.lastUseOf);
        return new Map(
          clientIds.map((clientId) => {
            const last = lastUse.get(clientId);
            if (!last) return [clientId, NO_USAGE];
            const found: UsageBucket[] = [];
            for (const { grain, from, to } of ranges) {
              for (const row of buckets.all(clientId, grain, from, to ?? Number.MAX_SAFE_INTEGER)) {
                found.push({ grain, start: integer(row.start), reads: integer(row.reads) });
              }
            }
            return [clientId, { lastUsedAt: text(last.last_used_at), usage: usageFrom(found, now) }];
          }),
        );
      });
    },

    dailyReads(clientId, from, to) {
      return read(() => {
        const hours = statement(QUERIES.dailyReads).all(clientId, bucketStart('hour', from.getTime()), to.getTime());
        return dailyFromHours(
          hours.map((row) => ({ start: integer(row.start), reads: integer(row.reads), refusals: integer(row.refusals) })),
        );
      });
    },

    async prune(before, now) {
      if (store.closed) throw new Error('the access log is closed');
      await pruneEntries(before.toISOString());
      await pruneUsage(now.getTime() - USAGE_BUCKET_RETENTION_MS);
    },

    close: store.close,
  };
}

/** The windows' ranges overlap (the 30 days' hours hold the 24 hours'): a range inside another is not read again. */
function widestRanges(ranges: readonly BucketRange[]): BucketRange[] {
  const end = (range: BucketRange) => range.to ?? Number.POSITIVE_INFINITY;
  return ranges.filter(
    (range) =>
      !ranges.some((other) => other !== range && other.grain === range.grain && other.from <= range.from && end(other) >= end(range)),
  );
}

/** What a batch adds to one bucket of one Client ID. */
interface Counted {
  clientId: string;
  reads: number;
  refusals: number;
}

/** The columns of CHANGES.insert, in its order. */
function columnsOf({ clientId, at, requestId, id, resource, status, code, clientAddress }: AccessRecord): SQLInputValue[] {
  return [clientId, at, requestId, id, resource, status, code, clientAddress];
}

function textOrNull(value: unknown): string | null {
  return value === null ? null : text(value);
}
