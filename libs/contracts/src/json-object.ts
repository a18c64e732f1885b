/**
 * The text's JSON when it is an object, else undefined (not JSON, or another value): how a value read
 * back from a log or a file is first looked at, before its fields are checked.
 */
export function jsonObjectOf(text: string): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
}
