/** What a request got: an answer, or none (refused or reset connection, or no answer in time). */
export type Outcome =
  { answered: true; status: number; body: unknown; headers: Headers; ms: number } | { answered: false; error: string; ms: number };

/** A client gives up after this; a service that keeps a request longer has failed it. */
export const REQUEST_TIMEOUT_MS = 10_000;

export async function call(url: string, init: RequestInit = {}): Promise<Outcome> {
  const t0 = performance.now();
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: kept as text for the report
    }
    return { answered: true, status: response.status, body, headers: response.headers, ms: performance.now() - t0 };
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const name = cause instanceof Error ? ((cause as NodeJS.ErrnoException).code ?? cause.name) : String(cause);
    return { answered: false, error: name, ms: performance.now() - t0 };
  }
}

export function codeOf(outcome: Outcome): string | undefined {
  if (!outcome.answered || typeof outcome.body !== 'object' || outcome.body === null) return undefined;
  const code = (outcome.body as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** The only 5xx the specification documents: 503 with the code SERVICE_UNAVAILABLE. */
export function isDocumented503(outcome: Outcome): boolean {
  return outcome.answered && outcome.status === 503 && codeOf(outcome) === 'SERVICE_UNAVAILABLE';
}

/**
 * A refusal's name for the report: its code, or for the code-less answers the limiter that
 * fired (429) or the edge policy (403).
 */
export function refusalName(outcome: Outcome & { answered: true }): string {
  const code = codeOf(outcome);
  if (code) return `${outcome.status} ${code}`;
  if (outcome.status === 429) return `429 ${limiterOf(outcome)}`;
  if (outcome.status === 403) return '403 edge policy';
  return String(outcome.status);
}

/** Which limiter a 429 came from: its draft-8 RateLimit-Policy header names it. */
export function limiterOf(outcome: Outcome & { answered: true }): string {
  const policy = outcome.headers.get('ratelimit-policy') ?? '';
  // The credential limiter runs only for a caller that authenticated, so its name decides.
  if (policy.includes('"credential"')) return 'credential';
  if (policy.includes('"failed-auth"')) return 'failed-auth';
  return 'limiter unknown';
}
