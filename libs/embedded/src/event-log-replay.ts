import { readFile, truncate } from 'node:fs/promises';
import type { EmbeddedLogger } from './embedded-logger';

/** One line of the log file. `value` is the serialized value exactly as it was appended. */
export interface LoggedLine {
  topic: string;
  key: string;
  value: string;
}

export function formatLines(lines: readonly LoggedLine[]): string {
  return lines.map((line) => `${JSON.stringify({ topic: line.topic, key: line.key, value: line.value })}\n`).join('');
}

/**
 * Reads the whole file back. A record counts only once its newline is written, so a crash can
 * leave at most the last line torn: that one is cut away. Anything unreadable before it means the
 * file was damaged some other way, and guessing past it would lose or invent events.
 */
export async function replayLogFile(file: string, log: EmbeddedLogger): Promise<LoggedLine[]> {
  const content = await readIfExists(file);
  const lines: LoggedLine[] = [];
  let start = 0;
  while (start < content.length) {
    const end = content.indexOf(0x0a, start);
    const line = end === -1 ? undefined : parseLine(content.subarray(start, end).toString('utf8'));
    if (!line) {
      if (end !== -1 && end + 1 < content.length) {
        throw new Error(`event log ${file} is corrupt: unreadable record at byte ${start}`);
      }
      log.warn({ file, byteOffset: start, bytes: content.length - start }, 'cutting a torn last record left by a crash');
      await truncate(file, start);
      break;
    }
    lines.push(line);
    start = end + 1;
  }
  return lines;
}

async function readIfExists(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw error;
  }
}

function parseLine(text: string): LoggedLine | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { topic, key, value } = parsed as Record<string, unknown>;
  if (typeof topic !== 'string' || typeof key !== 'string' || typeof value !== 'string') return undefined;
  return { topic, key, value };
}
