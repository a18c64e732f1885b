import { ApiError } from './errors';

/*
 * The pages of every list the services answer: read one entry more than the page (so whether another
 * page follows is known without a count), and an opaque cursor naming the last entry given, so the
 * next page starts strictly after it whatever arrives meanwhile.
 */

/** A page read as `limit + 1` entries: the first `limit`, and `next` (the last of them) only when another page follows. */
export function pageOf<T>(found: readonly T[], limit: number): { items: T[]; next: T | undefined } {
  const items = found.slice(0, limit);
  return { items, next: found.length > limit ? items.at(-1) : undefined };
}

/** Opaque to callers: the text of a position, versioned by its owner so its form can change, in base64url. */
export function opaqueCursor(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/**
 * The named parts of a cursor `opaqueCursor` wrote: its text matches `shape`, whose groups are the parts
 * in the order of `names`, and `valid` holds of them. Anything else (another encoding of the same text
 * too) is INVALID_PARAMETER, so a position is only ever one this API gave.
 */
export function cursorParts<const K extends readonly string[]>(
  cursor: string,
  shape: RegExp,
  names: K,
  options: { maxLength?: number; valid?: (parts: Record<K[number], string>) => boolean } = {},
): Record<K[number], string> {
  const encoded = new RegExp(`^[A-Za-z0-9_-]{1,${options.maxLength ?? 400}}$`).test(cursor);
  const decoded = encoded ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const groups = shape.exec(decoded)?.slice(1) ?? [];
  const parts = Object.fromEntries(names.map((name, index) => [name, groups[index]])) as Record<K[number], string>;
  const whole = groups.length === names.length && groups.every((group) => group !== undefined);
  if (!whole || !(options.valid?.(parts) ?? true) || opaqueCursor(decoded) !== cursor) {
    throw new ApiError('INVALID_PARAMETER', 'cursor is not one this API returned as nextCursor');
  }
  return parts;
}
