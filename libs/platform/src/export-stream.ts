import type { Request, Response } from 'express';

/*
 * Decision 54's exports: a log (the audit trail, the access log) as CSV or NDJSON, streamed at any
 * size in constant memory: pages are read from the store one at a time and written to the response
 * as the client takes them (a full socket buffer waits for `drain`), so no more than a page is held.
 */

export type ExportFormat = 'json' | 'csv' | 'ndjson';

export const CSV_TYPE = 'text/csv';
export const NDJSON_TYPE = 'application/x-ndjson';

/**
 * What the client asked for by `Accept`: JSON unless it prefers CSV or NDJSON. An Accept of none of
 * them is answered as JSON (the API's own type), as the API does elsewhere.
 */
export function exportFormatOf(req: Request): ExportFormat {
  const preferred = req.accepts(['application/json', CSV_TYPE, NDJSON_TYPE]);
  if (preferred === CSV_TYPE) return 'csv';
  if (preferred === NDJSON_TYPE) return 'ndjson';
  return 'json';
}

/** A column: its header, and the cell of an item (null for an empty cell). */
export interface Column<T> {
  header: string;
  cell(item: T): string | number | null;
}

/** The fields of T whose values are cells as they are. */
type CellField<T> = { [K in keyof T]: T[K] extends string | number | null ? K : never }[keyof T] & string;

/** Columns that are fields of the item as they are, each headed by its field's name. */
export function fieldColumns<T>(...fields: CellField<T>[]): Column<T>[] {
  return fields.map((field) => ({ header: field, cell: (item) => item[field] as string | number | null }));
}

/** Reads the next page after the last item of the one before (undefined for the first); an empty page ends the export. */
export type PageReader<T> = (after: T | undefined) => Promise<readonly T[]>;

/** How many entries an export reads from the store at a time. */
export const EXPORT_PAGE_SIZE = 500;

/**
 * Writes every item `read` finds as CSV (RFC 4180, with a header line) or NDJSON (one JSON object a
 * line, as `line` makes it). Headers are sent before the first page; an error after that can only end
 * the response early (the client sees a cut-off body, never a wrong one). Stops when the client goes.
 */
export async function streamExport<T>(
  res: Response,
  format: 'csv' | 'ndjson',
  options: { columns: readonly Column<T>[]; line: (item: T) => object; read: PageReader<T>; filename: string },
): Promise<void> {
  let gone = false;
  res.once('close', () => (gone = true));
  res.status(200);
  res.setHeader('Content-Type', format === 'csv' ? `${CSV_TYPE}; charset=utf-8; header=present` : `${NDJSON_TYPE}; charset=utf-8`);
  res.setHeader('Content-Disposition', `attachment; filename="${options.filename}.${format === 'csv' ? 'csv' : 'ndjson'}"`);
  res.setHeader('Cache-Control', 'no-store');
  // A full buffer waits for `drain` (or the client's going), its listeners removed either way: an
  // export waits thousands of times, and listeners left behind would be the memory it must not hold.
  const write = (chunk: string) =>
    res.write(chunk)
      ? Promise.resolve()
      : new Promise<void>((done) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            done();
          };
          res.on('drain', go);
          res.on('close', go);
        });
  if (format === 'csv') await write(csvLine(options.columns.map((column) => column.header)));
  let after: T | undefined;
  while (!gone) {
    const page = await options.read(after);
    if (page.length === 0) break;
    let chunk = '';
    for (const item of page) {
      chunk += format === 'csv' ? csvLine(options.columns.map((column) => column.cell(item))) : `${JSON.stringify(options.line(item))}\n`;
    }
    await write(chunk);
    after = page.at(-1);
  }
  res.end();
}

/** One CSV record, CRLF-terminated as RFC 4180 has it. */
export function csvLine(cells: readonly (string | number | null)[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/**
 * RFC 4180's quoting (a cell with a comma, a quote or a line break is quoted, its quotes doubled), after
 * OWASP's guard against formula injection: a text cell that a spreadsheet would read as a formula
 * (starting with =, +, -, @, a tab or a carriage return) is prefixed with a single quote. Numbers are
 * written as they are.
 */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const guarded = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(guarded) ? `"${guarded.replaceAll('"', '""')}"` : guarded;
}
