import type { SQLInputValue } from 'node:sqlite';
import type { AccessRecord } from '@rsd/contracts';
import { bucketStart, countsAsRefusal, countsAsUse } from '@rsd/domain';

/**
 * A batch of access records ready to write: their columns, and what each one adds to the usage
 * counts if it turns out to be new. Everything the domain decides is decided here, on the event
 * loop's thread, so that writing it (write-access-batch.ts) needs nothing but SQL: it runs on the
 * access log's writer thread (access-log-worker.ts) as well as in the store.
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
