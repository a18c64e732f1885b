import { execFileSync } from 'node:child_process';

/**
 * CSV as Python's `csv` module reads it (RFC 4180's dialect, strict): an independent parser, so an
 * export is checked against another implementation than the one that wrote it. Rows of cells.
 */
export function parseCsvIndependently(text: string): string[][] {
  const script = [
    'import csv, json, sys',
    "rows = list(csv.reader(sys.stdin.buffer.read().decode('utf-8').splitlines(keepends=True), strict=True))",
    'json.dump(rows, sys.stdout)',
  ].join('\n');
  return JSON.parse(execFileSync('python3', ['-c', script], { input: text, encoding: 'utf8' })) as string[][];
}

/** NDJSON as its own definition has it: one JSON value per line, every line (the last included) ended by \n. */
export function parseNdjson(text: string): unknown[] {
  if (text === '') return [];
  if (!text.endsWith('\n')) throw new Error('NDJSON must end with a newline');
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
}
