export interface Answer<T> {
  status: number;
  body: T;
}

/** A JSON request; the status is the caller's to judge (never thrown on). */
export async function requestJson<T = unknown>(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON (/metrics, an HTML error page): the text is the body.
  }
  return { status: response.status, body: body as T } satisfies Answer<T>;
}

/** Runs `task` for 0 … count-1 with at most `concurrency` in flight; the first failure stops the rest and is thrown. */
export async function forEachLimited(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < count) {
      const index = next++;
      try {
        await task(index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}
