/**
 * Retries an assertion until it passes or the time is up, then fails with its last error.
 * Delivery may be asynchronous in any adapter, so tests wait for an outcome instead of sleeping.
 */
export async function eventually<T>(
  assertion: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 10 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (error) {
      if (Date.now() >= deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A name no other test run uses, for topics, groups, keys and prefixes in shared backends. */
export function uniqueName(base: string): string {
  return `${base}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

let ordered = 0;

/** A unique id of `kind` whose last part counts the calls (`sequence`, also given), so ids made later name a later place. */
export function anOrderedId(kind: string): { id: string; sequence: number } {
  ordered += 1;
  return { id: `${uniqueName(kind).replace(/[^A-Za-z0-9-]/g, '')}-${String(ordered).padStart(8, '0')}`, sequence: ordered };
}

/** Polls `check` until it gives a value and resolves with that value; fails once `timeoutMs` (default 5 s) have passed. */
export function eventuallyDefined<T>(
  check: () => T | undefined,
  { timeoutMs = 5_000, intervalMs = 20 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  return eventually(
    () => {
      const value = check();
      if (value === undefined) throw new Error(`not within ${timeoutMs} ms`);
      return value;
    },
    { timeoutMs, intervalMs },
  );
}
