import { anAccessRecord, aUniqueClientId } from '@rsd/testkit';
import { accessBatchOf, accessBatchText } from './access-log-batch';
import { readAccessLines } from './access-batch-text';

const MINUTE = 60_000;

describe('an access batch as lines, as it crosses to the writer thread', () => {
  it('when a batch is written as lines and read back, then it is the batch the store itself would write', () => {
    const clientId = aUniqueClientId();
    const records = [
      anAccessRecord(clientId, 3 * MINUTE),
      anAccessRecord(clientId, 2 * MINUTE, { status: 304, code: null }),
      anAccessRecord(clientId, 2 * MINUTE, { status: 401, code: 'INVALID_API_KEY', resource: 'pillars', clientAddress: null }),
      anAccessRecord(clientId, MINUTE, { status: 429, code: 'RATE_LIMITED', resource: 'history', clientAddress: '2001:db8::1' }),
      anAccessRecord(clientId, 0, { status: 503, code: 'SERVICE_UNAVAILABLE' }),
      anAccessRecord(clientId, 0, { resource: 'certificate', certificate: { asOf: '2026-11-20', format: 'pdf' } }),
    ];

    const read = readAccessLines(accessBatchText(records));

    expect(read).toEqual(accessBatchOf(records));
    expect(read.rows.map((row) => [row[5], row[6], row[7]])).toEqual(records.map((r) => [r.status, r.code, r.clientAddress]));
    expect(read.rows.at(-1)?.[8]).toBe('{"asOf":"2026-11-20","format":"pdf"}');
  });

  it('when the records span minutes and hours, then each counts in its own minute and hour', () => {
    const clientId = aUniqueClientId();
    const records = ['2026-11-29T09:59:59.999Z', '2026-11-29T10:00:00.000Z', '2026-11-29T10:00:30.000Z', '2026-11-29T10:01:00.000Z'].map(
      (at) => ({ ...anAccessRecord(clientId, 0), at }),
    );

    const { counts } = readAccessLines(accessBatchText(records));

    expect(counts.map((count) => (count === 0 ? 0 : [count[1], count[2]]))).toEqual([
      [Date.parse('2026-11-29T09:59:00Z'), Date.parse('2026-11-29T09:00:00Z')],
      [Date.parse('2026-11-29T10:00:00Z'), Date.parse('2026-11-29T10:00:00Z')],
      [Date.parse('2026-11-29T10:00:00Z'), Date.parse('2026-11-29T10:00:00Z')],
      [Date.parse('2026-11-29T10:01:00Z'), Date.parse('2026-11-29T10:00:00Z')],
    ]);
  });

  it('when a line lacks a field or has one too many, then the batch is refused, naming the line', () => {
    const line = accessBatchText([anAccessRecord(aUniqueClientId(), 0)]);

    expect(() => readAccessLines(line + line.replace('\t', ''))).toThrow('access batch line 2 has 11 fields, not 12');
    expect(() => readAccessLines(line.replace('\t', '\t\t'))).toThrow('access batch line 1 has 13 fields, not 12');
  });
});
