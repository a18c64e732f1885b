import { Option, type Command } from 'commander';

/** How a list command prints: the answer as JSON (as every command), or its rows as a table, CSV or one JSON line each. */
export const OUTPUT_FORMATS = ['json', 'table', 'csv', 'ndjson'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** A table's column: its header and how a row shows in it. */
export type Column = [header: string, cell: (row: Record<string, unknown>) => string];

/** The list commands, each with the table columns it chose (none: every field of the rows). */
const LISTS = new WeakMap<Command, { columns?: Column[] | undefined }>();

/**
 * Makes `command` a list command: `--output json|table|csv|ndjson` (default json, the answer as the API gives it),
 * and `--table` as a short form of `--output table` where the command had it.
 */
export function listOutput(command: Command, { columns, tableAlias = false }: { columns?: Column[]; tableAlias?: boolean } = {}): Command {
  LISTS.set(command, { columns });
  command.addOption(
    new Option('--output <format>', 'how to print: the JSON answer, or its rows as a table, CSV or NDJSON')
      .choices(OUTPUT_FORMATS)
      .default('json'),
  );
  if (tableAlias) command.option('--table', 'a table: the same as --output table');
  return command;
}

/**
 * What a command prints, in the format it was asked for: unchanged unless it is a list command asked for table, csv or
 * ndjson. Then its rows are printed (the answer's list: the answer itself, or its one array-valued field) and what
 * else the answer says (`nextCursor`, `leftOut`) is told on stderr, so that the rows alone go to stdout.
 */
export function formatted(command: Command, result: unknown, note: (line: string) => void): unknown {
  const list = LISTS.get(command);
  if (list === undefined || result === undefined || typeof result === 'string') return result;
  const options = command.opts<{ output?: OutputFormat; table?: boolean }>();
  const format: OutputFormat = options.table ? 'table' : (options.output ?? 'json');
  if (format === 'json') return result;
  const { rows, rest } = rowsOf(result);
  for (const [name, value] of Object.entries(rest)) {
    if (value === undefined || value === null) continue;
    note(
      name === 'nextCursor' && typeof value === 'string'
        ? `rsd: more: the next page with --cursor ${value}`
        : `rsd: ${name}: ${JSON.stringify(value)}`,
    );
  }
  return formatRows(rows, format, list.columns);
}

/** The rows of an answer: the answer if it is a list, else its first array-valued field (the rest beside them). */
export function rowsOf(result: unknown): { rows: Record<string, unknown>[]; rest: Record<string, unknown> } {
  if (Array.isArray(result)) return { rows: result as Record<string, unknown>[], rest: {} };
  const fields = (result ?? {}) as Record<string, unknown>;
  const key = Object.keys(fields).find((name) => Array.isArray(fields[name]));
  if (key === undefined) return { rows: [fields], rest: {} };
  const { [key]: rows, ...rest } = fields;
  return { rows: rows as Record<string, unknown>[], rest };
}

/** Rows as `format`: a text ending in a line end for csv and ndjson (none for no rows), and for a table without one. */
export function formatRows(rows: Record<string, unknown>[], format: Exclude<OutputFormat, 'json'>, columns?: Column[]): string {
  if (format === 'ndjson') return rows.map((row) => `${JSON.stringify(row)}\n`).join('');
  const chosen = format === 'table' && columns ? columns : columnsOf(rows);
  const cells = rows.map((row) => chosen.map(([, cell]) => cell(row)));
  const header = chosen.map(([title]) => title);
  if (format === 'csv') return [header, ...cells].map((line) => `${line.map(csvCell).join(',')}\r\n`).join('');
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((row) => row[column]!.length)));
  return [header, ...cells]
    .map((line) =>
      line
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Every field of the rows, in the order first seen; a nested object's fields as `field.inner`. */
function columnsOf(rows: Record<string, unknown>[]): Column[] {
  const paths: string[] = [];
  const visit = (value: Record<string, unknown>, above: string) => {
    for (const [name, inner] of Object.entries(value)) {
      const path = above ? `${above}.${name}` : name;
      if (isPlainObject(inner)) visit(inner, path);
      else if (!paths.includes(path)) paths.push(path);
    }
  };
  for (const row of rows) visit(row, '');
  return paths.map((path) => [
    path,
    (row) => cellOf(path.split('.').reduce<unknown>((value, name) => (isPlainObject(value) ? value[name] : undefined), row)),
  ]);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One value as a cell: nothing for null or absent, a list of scalars comma-separated, anything else as JSON. */
export function cellOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((item) => typeof item !== 'object' || item === null)) return value.join(',');
  return typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' ? String(value) : JSON.stringify(value);
}

/** RFC 4180: a cell with a comma, a quote or a line end in quotes, its quotes doubled. */
function csvCell(cell: string): string {
  return /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}
