import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { accessRecordSchema } from '@rsd/contracts';
import { bucketStart } from '@rsd/domain';
import { connectRaw } from './database';
import { exists, importOnce, type ImportLogger } from './import-earlier-data';
import { CHANGES, createAccessLogTables } from './access-log-tables';

export interface ImportAccessLogOptions {
  /** The directory an earlier version kept the access log in (DATA_DIR/access-log). */
  dir: string;
  /** The access-log database the records go to. */
  file: string;
  log: ImportLogger;
}

/**
 * Upgrades the access log an earlier version kept in files (`entries/<day>/<clientId>.ndjson`,
 * `usage/<day>.ndjson`, `usage/last-used.ndjson`) into the access-log database, once: in one
 * transaction with a marker row, then the directory is renamed `access-log.imported` for the
 * operator to delete, as the event log's import does. Usage is taken as those files counted it, not
 * counted again from the entries, which may be kept for fewer days than usage is. A line that does
 * not read (torn by a crash; that version skipped it too) is left out and counted in one warning.
 */
export async function importEarlierAccessLog({ dir, file, log }: ImportAccessLogOptions): Promise<void> {
  if (!(await exists(dir))) return;
  const db = connectRaw(file);
  try {
    createAccessLogTables(db);
    await importOnce(db, dir, log, async () => {
      const insert = db.prepare(CHANGES.insert);
      const count = db.prepare(CHANGES.count);
      const lastUse = db.prepare(CHANGES.noteLastUse);
      let records = 0;
      let unreadable = 0;
      const entriesDir = join(dir, 'entries');
      for (const day of await namesIn(entriesDir)) {
        for (const name of await namesIn(join(entriesDir, day))) {
          const clientId = name.replace(/\.ndjson$/, '');
          for await (const line of jsonLines(join(entriesDir, day, name))) {
            const parsed = accessRecordSchema.safeParse(typeof line === 'object' ? { ...line, clientId } : line);
            if (!parsed.success) {
              unreadable += 1;
              continue;
            }
            const { at, requestId, id, resource, status, code, clientAddress } = parsed.data;
            // That version kept no certificate's details.
            insert.run(clientId, at, requestId, id, resource, status, code, clientAddress, null);
            records += 1;
          }
        }
      }
      const usageDir = join(dir, 'usage');
      for (const name of await namesIn(usageDir)) {
        for await (const line of jsonLines(join(usageDir, name))) {
          const usage = usageOf(line);
          if (!usage) {
            unreadable += 1;
            continue;
          }
          if (usage.minute !== undefined) {
            count.run(usage.clientId, 'minute', bucketStart('minute', usage.minute), usage.reads);
            count.run(usage.clientId, 'hour', bucketStart('hour', usage.minute), usage.reads);
          }
          lastUse.run(usage.clientId, usage.lastUsedAt);
        }
      }
      if (unreadable > 0) log.warn({ dir, lines: unreadable }, 'left out unreadable lines of the earlier access log');
      return records;
    });
  } finally {
    db.close();
  }
}

async function namesIn(dir: string): Promise<string[]> {
  return (await exists(dir)) ? (await readdir(dir)).sort() : [];
}

/** Each line's JSON value, or undefined where a line does not parse; blank lines are passed over. */
async function* jsonLines(file: string): AsyncGenerator<unknown> {
  for await (const text of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })) {
    if (text === '') continue;
    try {
      yield JSON.parse(text) as unknown;
    } catch {
      yield undefined;
    }
  }
}

/** A usage line (`{clientId, minute, reads, lastUsedAt}`) or a last use (`{clientId, lastUsedAt}`), minute in epoch ms. */
function usageOf(line: unknown): { clientId: string; minute?: number; reads: number; lastUsedAt: string } | undefined {
  if (typeof line !== 'object' || line === null) return undefined;
  const { clientId, minute, reads, lastUsedAt } = line as Record<string, unknown>;
  if (typeof clientId !== 'string' || typeof lastUsedAt !== 'string' || Number.isNaN(Date.parse(lastUsedAt))) return undefined;
  if (minute === undefined && reads === undefined) return { clientId, reads: 0, lastUsedAt };
  const start = typeof minute === 'string' ? Date.parse(minute) : NaN;
  if (Number.isNaN(start) || !Number.isInteger(reads) || (reads as number) < 1) return undefined;
  return { clientId, minute: start, reads: reads as number, lastUsedAt };
}
