import { readFile } from 'node:fs/promises';

/**
 * Reads scores from a JSON file (one score, an array, or `{ "scores": [...] }`) or NDJSON (one score
 * per line). Validation is the service's job; this only splits the file into items.
 */
export async function readScoreFile(path: string): Promise<unknown[]> {
  const text = await readFile(path, 'utf8');
  const trimmed = text.trim();
  if (trimmed === '') throw new UsageError(`${path} is empty`);
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (Array.isArray(parsed)) return parsed as unknown[];
    if (typeof parsed === 'object' && parsed !== null && Array.isArray((parsed as { scores?: unknown }).scores)) {
      return (parsed as { scores: unknown[] }).scores;
    }
    return [parsed];
  } catch (error) {
    if (error instanceof UsageError) throw error;
  }
  return trimmed.split('\n').flatMap((line, index) => {
    if (line.trim() === '') return [];
    try {
      return [JSON.parse(line) as unknown];
    } catch {
      throw new UsageError(`${path}:${index + 1} is not valid JSON`);
    }
  });
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/** A mistake in how the CLI was called: exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
