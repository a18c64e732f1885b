import { certificateReadSchema, type AccessRecord, type AccessResource, type CertificateRead } from '@rsd/contracts';
import {
  bucketStart,
  dailyFromHours,
  NO_USAGE,
  USAGE_BUCKET_RETENTION_MS,
  usageBucketRanges,
  usageFrom,
  type BucketRange,
  type UsageBucket,
} from '@rsd/domain';
import type { AccessLog, AccessLogStore, Subscription } from '@rsd/ports';
import { silentLogger } from '../embedded-logger';
import { BUSY_TIMEOUT_MS, integer, text } from './database';
import { openStoreDatabase } from './store-database';
import { CHANGES, createAccessLogTables, pageQuery, QUERIES } from './access-log-tables';
import { accessBatchOf, accessBatchText } from './access-log-batch';
import { startAccessLogWriter } from './access-log-writer';
import { writeAccessBatch } from './write-access-batch';
import { importEarlierAccessLog } from './import-earlier-access-log';
import type { ImportLogger } from './import-earlier-data';

const NOTHING_TO_FOLLOW: Subscription = {
  caughtUp: Promise.resolve(),
  freshAsOf: () => undefined,
  behindSince: () => undefined,
  close: () => Promise.resolve(),
};

/** Rows deleted per turn of the event loop, each batch its own commit: a prune never holds the loop for long. */
export const PRUNE_BATCH = 1_000;

export interface SqliteAccessLogOptions {
  /** DATA_DIR/access-log.sqlite: a database of its own, apart from the event log's (docs/decisions/0021-access-log.md). */
  file: string;
  /** An access-log directory an earlier version wrote (DATA_DIR/access-log): imported once, then renamed `.imported`. */
  importFrom?: string;
  log?: ImportLogger;
}

/**
 * The embedded runtime's access log (decision 21). Publishing writes the store directly, from the
 * access log's writer thread (access-log-writer.ts): the read API and the credentials service share
 * the process, and the read API's event loop only hands the batch over.
 */
export async function openSqliteAccessLog(options: SqliteAccessLogOptions): Promise<AccessLog> {
  if (options.importFrom !== undefined) {
    await importEarlierAccessLog({
      dir: options.importFrom,
      file: options.file,
      log: options.log ?? { ...silentLogger, info: () => undefined },
    });
  }
  // The store first: it creates the tables the thread writes to.
  const store = openSqliteAccessLogStore({ file: options.file });
  const writer = startAccessLogWriter({ file: options.file, busyTimeoutMs: BUSY_TIMEOUT_MS });
  const watchers = new Set<(records: readonly AccessRecord[]) => Promise<void>>();
  const log = options.log ?? { ...silentLogger, info: () => undefined };
  // After the store has the batch, and never in the publisher's way: its answer does not wait for the observers.
  const observe = (records: readonly AccessRecord[]) => {
    for (const watcher of watchers) {
      watcher(records).catch((error: unknown) =>
        log.warn(
          { err: error instanceof Error ? error.message : String(error), records: records.length },
          'observing an access-log batch failed',
        ),
      );
    }
  };
  return {
    publish: async (records) => {
      if (records.length === 0) return;
      await writer.write(accessBatchText(records));
      if (watchers.size > 0) observe(records);
    },
    watch: (watcher) => {
      watchers.add(watcher);
      return Promise.resolve({ ...NOTHING_TO_FOLLOW, close: () => Promise.resolve(void watchers.delete(watcher)) });
    },
    openStore: () => Promise.resolve(store),
    // Publishing writes the store itself (one process): there is nothing to follow.
    follow: () => Promise.resolve(NOTHING_TO_FOLLOW),
    // The thread's connection first, so that the store's closes last and checkpoints what is left.
    close: async () => {
      await writer.stop();
      await store.close();
    },
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
      const batch = accessBatchOf(records);
      return changeSoon(() => writeAccessBatch({ prepare: statement }, batch, 'savepoint'));
    },

    page(clientId, { limit, after, filter = {} }) {
      return read(() => {
        const conditions: string[] = [];
        const values: (string | number)[] = [clientId];
        const where = (condition: string, ...given: (string | number)[]) => {
          conditions.push(condition);
          values.push(...given);
        };
        if (after) where('(at, request_id, id) < (?, ?, ?)', after.at, after.requestId, after.id);
        if (filter.from !== undefined) where('at >= ?', filter.from);
        if (filter.to !== undefined) where('at < ?', filter.to);
        if (filter.status) where('status BETWEEN ? AND ?', filter.status.min, filter.status.max);
        if (filter.address !== undefined) where('client_address = ?', filter.address);
        if (filter.resource !== undefined) where('resource = ?', filter.resource);
        const rows = statement(pageQuery(conditions)).all(...values, limit);
        return rows.map((row): AccessRecord => ({
          id: text(row.id),
          clientId,
          at: text(row.at),
          resource: text(row.resource) as AccessResource,
          status: integer(row.status),
          code: textOrNull(row.code),
          clientAddress: textOrNull(row.client_address),
          requestId: text(row.request_id),
          ...withCertificate(certificateOfText(textOrNull(row.certificate))),
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

    // Decision 56: by the primary keys' first column, Client ID by Client ID, each an index range.
    purgeClients(clientIds) {
      return store.write(() => {
        for (const table of ['access_log', 'access_usage', 'access_last_use']) {
          const purge = statement(`DELETE FROM ${table} WHERE client_id = ?`);
          for (const clientId of clientIds) purge.run(clientId);
        }
      });
    },

    eraseAddresses(clientId) {
      return store.write(() => {
        statement('UPDATE access_log SET client_address = NULL WHERE client_id = ? AND client_address IS NOT NULL').run(clientId);
      });
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

function textOrNull(value: unknown): string | null {
  return value === null ? null : text(value);
}

/** A record's certificate details when it has some: a record without them has no such key. */
function withCertificate(certificate: AccessRecord['certificate']): Pick<AccessRecord, 'certificate'> {
  return certificate ? { certificate } : {};
}

/** The column's text as the record's details; a value that is not one is left out rather than failing the page. */
function certificateOfText(text: string | null): CertificateRead | undefined {
  if (text === null) return undefined;
  try {
    const parsed = certificateReadSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
