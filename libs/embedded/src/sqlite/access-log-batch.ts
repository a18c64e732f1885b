import type { SQLInputValue } from 'node:sqlite';
import type { AccessRecord } from '@rsd/contracts';
import { bucketStart, countsAsRefusal, countsAsUse } from '@rsd/domain';
import { COUNTS } from './write-access-batch';

/**
 * A batch of access records ready to write: their columns, and what each one adds to the usage
 * counts if it turns out to be new. Everything the domain decides is decided here, on the event
 * loop's thread, so that writing it (write-access-batch.ts) needs nothing but SQL: it runs on the
 * access log's writer thread (access-log-worker.ts) as well as in the store.
 */
export interface AccessBatch {
  /** CHANGES.insert's columns, one array per record (ACCESS_ROW names those the counts read). */
  rows: SQLInputValue[][];
  /** Per record, in the same order: what it counts for, or 0 when it counts for nothing (a 304, a 5xx). */
  counts: (RecordCount | 0)[];
}

/**
 * [what (COUNTS.read, COUNTS.refusal or both), its minute's start, its hour's start]. The record's id
 * and Client ID are in its row, and so is its `at`, to which a read moves the Client ID's last use.
 * A tuple of numbers, not an object: a batch crosses to the writer thread as JSON, whose size is most
 * of what the handover costs, and an object's keys would be half of it.
 */
export type RecordCount = [what: number, minuteStart: number, hourStart: number];

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
    counts: records.map(({ at, resource, status }): RecordCount | 0 => {
      const what = (countsAsUse({ resource, status }) ? COUNTS.read : 0) | (countsAsRefusal({ resource, status }) ? COUNTS.refusal : 0);
      if (what === 0) return 0;
      // `at` is one fixed ISO form: its first 16 characters name its minute.
      const minuteStart = Date.parse(`${at.slice(0, 16)}:00.000Z`);
      return [what, minuteStart, bucketStart('hour', minuteStart)];
    }),
  };
}
