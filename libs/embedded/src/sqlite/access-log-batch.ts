import type { AccessRecord } from '@rsd/contracts';
import { bucketStart, countsAsRefusal, countsAsUse } from '@rsd/domain';
import { accessLine, certificateText, type AccessBatch, type RecordCount } from './access-batch-text';
import { COUNTS } from './write-access-batch';

export type { AccessBatch, RecordCount } from './access-batch-text';

/** The batch of the store's own writes (sqlite-access-log.ts `add`). */
export function accessBatchOf(records: readonly AccessRecord[]): AccessBatch {
  const countOf = recordCounts();
  return {
    rows: records.map(({ clientId, at, requestId, id, resource, status, code, clientAddress, certificate }) => [
      clientId,
      at,
      requestId,
      id,
      resource,
      status,
      code,
      clientAddress,
      certificateText(certificate),
    ]),
    counts: records.map(countOf),
  };
}

/** The same batch as the lines that cross to the writer thread (access-batch-text.ts). */
export function accessBatchText(records: readonly AccessRecord[]): string {
  const countOf = recordCounts();
  let text = '';
  for (const record of records) text += accessLine(record, countOf(record));
  return text;
}

/**
 * What each record of a batch counts for. A batch's records were answered within a second or so of
 * each other: their minute is worked out once, not parsed again for every record.
 */
function recordCounts(): (record: AccessRecord) => RecordCount | 0 {
  let minute = '';
  let starts: [minuteStart: number, hourStart: number] = [0, 0];
  return (record) => {
    const what = (countsAsUse(record) ? COUNTS.read : 0) | (countsAsRefusal(record) ? COUNTS.refusal : 0);
    if (what === 0) return 0;
    const { at } = record;
    // `at` is one fixed ISO form: its first 16 characters name its minute.
    if (minute === '' || !at.startsWith(minute)) {
      minute = at.slice(0, 16);
      const minuteStart = Date.parse(`${minute}:00.000Z`);
      starts = [minuteStart, bucketStart('hour', minuteStart)];
    }
    return [what, starts[0], starts[1]];
  };
}
