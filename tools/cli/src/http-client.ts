/** An HTTP answer other than 2xx: the CLI prints the service's error body and exits 1. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(describe(status, body));
    this.name = 'HttpError';
  }
}

function describe(status: number, body: unknown): string {
  if (typeof body === 'object' && body !== null) {
    const { code, message, details } = body as {
      code?: string;
      message?: string;
      details?: { path: string; message: string; index?: number }[];
    };
    const head = `${status}${code ? ` ${code}` : ''}: ${message ?? 'request failed'}`;
    const lines = (details ?? []).map((d) => `  - ${d.index !== undefined ? `[${d.index}] ` : ''}${d.path}: ${d.message}`);
    return [head, ...lines].join('\n');
  }
  return `${status}: ${typeof body === 'string' && body ? body : 'request failed'}`;
}

type CallOptions = { method?: string; headers?: Record<string, string>; body?: unknown };

/** The body of a 2xx answer; anything else is an HttpError. */
export async function callJson(url: string, options: CallOptions = {}): Promise<unknown> {
  return (await callJsonAnswer(url, options)).body;
}

/** A 2xx answer with its status, for commands whose 2xx answers mean different things (200 and 202). */
export async function callJsonAnswer(url: string, options: CallOptions = {}): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: options.method ?? 'GET',
      headers: {
        accept: 'application/json',
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new Error(`cannot reach ${new URL(url).origin}: ${cause}. Is the service running (npm start)?`);
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON (an edge proxy's page, for instance): keep the text for the message.
  }
  if (!response.ok) {
    const retryAfter = response.headers.get('retry-after');
    const error = new HttpError(response.status, body);
    if (retryAfter) error.message += ` (retry after ${retryAfter} s)`;
    throw error;
  }
  return { status: response.status, body };
}

/** A 2xx answer as received, bytes and all, for checking its signature; anything else is an HttpError. */
export async function fetchRaw(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Headers; body: Buffer }> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json', ...headers } });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new Error(`cannot reach ${new URL(url).origin}: ${cause}. Is the service running (npm start)?`);
  }
  const body = Buffer.from(await response.arrayBuffer());
  if (!response.ok) {
    let parsed: unknown = body.toString('utf8');
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      // Not JSON: keep the text for the message.
    }
    throw new HttpError(response.status, parsed);
  }
  return { status: response.status, headers: response.headers, body };
}
