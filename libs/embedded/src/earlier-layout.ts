import { jsonObjectOf } from '@rsd/contracts';

/**
 * The event log's file format before the embedded database: one JSON object per line,
 * `{"topic","key","value"}`, `value` the serialized value exactly as it was appended. Read by the
 * importer of an earlier data directory; written only by tests and the scale benchmark, which
 * build such directories.
 */
export interface LoggedLine {
  topic: string;
  key: string;
  value: string;
}

export function formatLines(lines: readonly LoggedLine[]): string {
  return lines.map((line) => `${JSON.stringify({ topic: line.topic, key: line.key, value: line.value })}\n`).join('');
}

/** The line's record, or undefined when it is not one (a torn or damaged line). */
export function parseLine(text: string): LoggedLine | undefined {
  const parsed = jsonObjectOf(text);
  if (!parsed) return undefined;
  const { topic, key, value } = parsed;
  if (typeof topic !== 'string' || typeof key !== 'string' || typeof value !== 'string') return undefined;
  return { topic, key, value };
}
