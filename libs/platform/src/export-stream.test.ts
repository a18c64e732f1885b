import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { csvCell, csvLine, streamExport } from './export-stream';

/** A response whose socket buffer is always full: every write waits for the next `drain`, which comes a turn later. */
function slowResponse() {
  const res = new EventEmitter() as EventEmitter & { written: string[]; ended: boolean };
  res.written = [];
  res.ended = false;
  return Object.assign(res, {
    status: () => res,
    setHeader: () => res,
    write: (chunk: string) => {
      res.written.push(chunk);
      setImmediate(() => res.emit('drain'));
      return false;
    },
    end: () => {
      res.ended = true;
    },
  });
}

describe('exports (decision 54)', () => {
  test('when every write waits for drain, then all pages are written, in order, and no listener is left behind', async () => {
    const res = slowResponse();
    const pages = Array.from({ length: 60 }, (_, page) => [page * 2, page * 2 + 1]);

    await streamExport<number>(res as unknown as Response, 'ndjson', {
      columns: [],
      line: (n) => ({ n }),
      filename: 'numbers',
      read: (last) => Promise.resolve(pages[last === undefined ? 0 : (last + 1) / 2] ?? []),
    });

    expect(res.written.join('')).toBe(
      pages
        .flat()
        .map((n) => `{"n":${n}}\n`)
        .join(''),
    );
    expect(res.ended).toBe(true);
    expect([res.listenerCount('drain'), res.listenerCount('error')]).toEqual([0, 0]);
    // Only the export's own watch for the client's going.
    expect(res.listenerCount('close')).toBeLessThanOrEqual(1);
  });

  test.each([
    ['=SUM(A1)', "'=SUM(A1)"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@cmd', "'@cmd"],
    ['\tx', "'\tx"],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['=a,"b"', `"'=a,""b"""`],
    ['line\nbreak', '"line\nbreak"'],
    ['plain', 'plain'],
  ])('when a cell is %j, then it is written %j', (value, written) => {
    expect(csvCell(value)).toBe(written);
  });

  test('when a row has numbers and empty cells, then numbers are written as they are, an empty cell as nothing, and the line ends in CRLF', () => {
    expect(csvLine([-3, null, 'x'])).toBe('-3,,x\r\n');
  });
});
