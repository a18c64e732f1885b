import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@rsd/platform';

export interface LogEntry {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface CapturedLog {
  log: Logger;
  /** Every line written, as written. */
  lines: string[];
  /** The lines parsed. */
  entries(): LogEntry[];
}

/** A service logger whose lines the test reads instead of standard output. */
export function capturedLog(service = 'test', level = 'info'): CapturedLog {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return {
    log: createLogger(service, level, destination),
    lines,
    entries: () => lines.map((line) => JSON.parse(line) as LogEntry),
  };
}
