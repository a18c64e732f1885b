import type { SQLInputValue } from 'node:sqlite';
import type { AccessRecord, CertificateRead } from '@rsd/contracts';

/**
 * A batch of access records ready to write: their columns, and what each one adds to the usage
 * counts if it turns out to be new. Everything the domain decides is decided on the event loop's
 * thread (access-log-batch.ts), so that writing it (write-access-batch.ts) needs nothing but SQL: it
 * runs on the access log's writer thread (access-log-worker.ts) as well as in the store. Types only from
 * @rsd/contracts: the writer thread loads no schema (zod and the contracts cost it 8 MB of heap).
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
 */
export type RecordCount = [what: number, minuteStart: number, hourStart: number];

/**
 * How a batch crosses to the writer thread: one line per record, its fields separated by tabs, in
 * the order of CHANGES.insert's columns (the certificate's details as their JSON), then what it counts for and its minute's and hour's start
 * (empty when it counts for nothing). An empty field is a null: no field of a record can be empty.
 *
 * Lines, not JSON: the read API's event loop makes one for every read, and a line costs about a third
 * of what encoding the batch's arrays as JSON did (docs/contributors/measurements.md). No
 * field can hold a tab or a line break: the Client ID is one the lookup found, the request id
 * passed REQUEST_ID's pattern or was made here, the address passed `isIP`, and the rest are ours.
 * The reader checks every line's field count all the same, and refuses the batch rather than shift a
 * column.
 */
export const FIELDS_PER_LINE = 12;

/** The line of one record (access-log-batch.ts gives the count from the domain's rules). */
export function accessLine(
  { clientId, at, requestId, id, resource, status, code, clientAddress, certificate }: AccessRecord,
  count: RecordCount | 0,
): string {
  const counted = count === 0 ? '\t\t' : `${count[0]}\t${count[1]}\t${count[2]}`;
  const described = certificateText(certificate) ?? '';
  return `${clientId}\t${at}\t${requestId}\t${id}\t${resource}\t${status}\t${code ?? ''}\t${clientAddress ?? ''}\t${described}\t${counted}\n`;
}

/** Decision 55's details of a certificate fetch as the column keeps them: JSON (no tab or line break), or null. */
export function certificateText(certificate: CertificateRead | undefined): string | null {
  return certificate ? JSON.stringify({ asOf: certificate.asOf, format: certificate.format }) : null;
}

/** `N` strings: a line's fields, once their count is checked. */
type Strings<N extends number, T extends string[] = []> = T['length'] extends N ? T : Strings<N, [...T, string]>;

/** The batch the lines describe; throws, naming the line, when one does not have every field. */
export function readAccessLines(text: string): AccessBatch {
  const rows: SQLInputValue[][] = [];
  const counts: (RecordCount | 0)[] = [];
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    const fields = text.slice(start, end === -1 ? text.length : end).split('\t');
    if (fields.length !== FIELDS_PER_LINE)
      throw new Error(`access batch line ${rows.length + 1} has ${fields.length} fields, not ${FIELDS_PER_LINE}`);
    const [clientId, at, requestId, id, resource, status, code, clientAddress, certificate, what, minuteStart, hourStart] =
      fields as Strings<typeof FIELDS_PER_LINE>;
    rows.push([clientId, at, requestId, id, resource, Number(status), code || null, clientAddress || null, certificate || null]);
    counts.push(what === '' ? 0 : [Number(what), Number(minuteStart), Number(hourStart)]);
    start = end === -1 ? text.length : end + 1;
  }
  return { rows, counts };
}
