import {
  ApiConnectionError,
  ApiError,
  ApiTimeoutError,
  Client,
  Organization,
  Portfolio,
  RateLimited,
  ServiceUnavailable,
  USER_AGENT,
  type TransportOptions,
} from '@resilience-score/client';
import { UsageError } from './score-file';

/** Where each service answers: its origin, without the versioned root (`/v1`). */
export interface Origins {
  api: string;
  credentials: string;
  ingest: string;
  notifier: string;
}

export const DEFAULT_ORIGINS: Origins = {
  api: 'http://127.0.0.1:8080',
  credentials: 'http://127.0.0.1:8081',
  ingest: 'http://127.0.0.1:8082',
  notifier: 'http://127.0.0.1:8083',
};

/** What the CLI knows about reaching the product: the options given, then the environment. */
export interface ProductSettings {
  origins: Origins;
  /** `--token` or RSD_TOKEN. */
  token?: string | undefined;
  /** The profile's token: the one `rsd login` kept, or one fetched with its OAuth client. */
  profileToken?: (() => Promise<string>) | undefined;
  /** `--api-key` or RSD_API_KEY: a grant's key, or a recipient account's key. */
  apiKey?: string | undefined;
  env: Record<string, string | undefined>;
  /** The SDK's transport (a test's fetch); the SDK's defaults otherwise. */
  transport?: TransportOptions;
}

/**
 * The product through the TypeScript SDK: an `Organization` for what an organization or a scoring
 * engine does (with a token given, or one minted for exactly the scope the command needs), a `Client`
 * for what a recipient does with its key. Time and failure are the SDK's (a 10 s timeout per attempt;
 * GETs and other repeatable requests tried again after a network failure or a 502/503/504; a 429 or 503
 * after its Retry-After, at most 60 s).
 */
export class Product {
  constructor(readonly settings: ProductSettings) {}

  get origins(): Origins {
    return this.settings.origins;
  }

  /**
   * A given token wins, then the profile's; otherwise (development) one is minted for exactly the scope the command
   * needs with the embedded runtime's secret.
   */
  async token(scope: string, org?: string): Promise<string> {
    if (this.settings.token) return this.settings.token;
    if (this.settings.profileToken) return this.settings.profileToken();
    const secret = await this.devSecret();
    if (!secret) throw new UsageError('no token: rsd login, or pass --token or RSD_TOKEN (or set JWT_HS256_SECRET, development only)');
    // Loaded only to mint a token: most commands never need it, and it is a large part of a start.
    const { signDevToken } = await import('@rsd/platform');
    return signDevToken(secret, { scope, ...(org ? { org } : {}) }, '5m');
  }

  async devSecret(): Promise<string | undefined> {
    if (this.settings.env.JWT_HS256_SECRET) return this.settings.env.JWT_HS256_SECRET;
    const { readDevSecret } = await import('@rsd/platform');
    return readDevSecret(this.settings.env.DATA_DIR ?? '.data');
  }

  /** The organization `org`'s authorizations, with `authorizations:write`. */
  async organization(org: string): Promise<Organization> {
    return new Organization({
      ...this.settings.transport,
      token: await this.token('authorizations:write', org),
      organizationId: org,
      credentialsUrl: `${this.origins.credentials}/v1`,
      notifierUrl: `${this.origins.notifier}/v1`,
    });
  }

  /** A scoring engine's publisher, with `scores:write`. */
  async publisher(): Promise<Organization> {
    return new Organization({
      ...this.settings.transport,
      token: await this.token('scores:write'),
      ingestUrl: `${this.origins.ingest}/v1`,
    });
  }

  apiKey(): string {
    const key = this.settings.apiKey;
    if (!key) throw new UsageError('no API key: set RSD_API_KEY (or pass --api-key)');
    return key;
  }

  /**
   * A recipient's client of one grant. Signatures are checked by the commands that are asked to
   * (`--verify`), which say what they checked: the client itself does not check them.
   */
  client(clientId: string): Client {
    return new Client({
      ...this.settings.transport,
      clientId,
      apiKey: this.apiKey(),
      baseUrl: `${this.origins.api}/v1`,
      notifierUrl: `${this.origins.notifier}/v1`,
      verifySignatures: false,
    });
  }

  /**
   * A recipient account's portfolio, its key the API key given. `onResponse` sees each response the SDK
   * receives (what an answer without a body, such as a release's, leaves to its status). Pages are not
   * verified: as for a grant's reads, that is for a command to ask.
   */
  portfolio({ onResponse }: { onResponse?: (response: Response) => void } = {}): Portfolio {
    const transport = this.settings.transport ?? {};
    const send = transport.fetch ?? ((input: Parameters<typeof fetch>[0], init?: RequestInit) => fetch(input, init));
    return new Portfolio({
      ...transport,
      ...(onResponse
        ? {
            fetch: async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
              const response = await send(input, init);
              onResponse(response);
              return response;
            },
          }
        : {}),
      accountKey: this.apiKey(),
      baseUrl: `${this.origins.api}/v1`,
      credentialsUrl: `${this.origins.credentials}/v1`,
      notifierUrl: `${this.origins.notifier}/v1`,
      verifySignatures: false,
    });
  }

  /**
   * What the SDK has no call for (one page of a paged list from a cursor the user gives, the claim of a
   * link, the portfolio's summary): one request with the SDK's User-Agent and timeout, its refusals and
   * network failures thrown as the SDK's own error classes. Sent once: no retry.
   */
  async send(request: { method?: string; url: string; headers?: Record<string, string>; body?: unknown }): Promise<Answer> {
    const method = request.method ?? 'GET';
    const target = `${method} ${new URL(request.url).origin}${new URL(request.url).pathname}`;
    const timeout = this.settings.transport?.timeout ?? 10_000;
    const timer = AbortSignal.timeout(timeout);
    let response: Response;
    let bytes: Uint8Array;
    try {
      response = await (this.settings.transport?.fetch ?? fetch)(request.url, {
        method,
        headers: {
          accept: 'application/json',
          'user-agent': this.settings.transport?.userAgent ? `${this.settings.transport.userAgent} ${USER_AGENT}` : USER_AGENT,
          ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...request.headers,
        },
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        redirect: 'manual',
        signal: timer,
      });
      bytes = new Uint8Array(await response.arrayBuffer());
    } catch (error) {
      if (timer.aborted) throw new ApiTimeoutError(`${target}: no complete answer within ${timeout} ms`, { cause: error });
      throw new ApiConnectionError(`${target}: ${networkFailure(error)}`, { cause: error });
    }
    if (response.status < 200 || response.status > 299) throw refusal(response.status, response.headers, bytes);
    return { status: response.status, headers: response.headers, body: bytes, path: new URL(request.url).pathname };
  }

  /** `send`, with the JSON body of its answer. */
  async sendJson(request: Parameters<Product['send']>[0]): Promise<{ status: number; body: unknown }> {
    const answer = await this.send(request);
    return { status: answer.status, body: answer.body.length === 0 ? undefined : jsonOf(answer.body) };
  }
}

export interface Answer {
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** The request's path without the query: what a response signature covers. */
  path: string;
}

export function jsonOf(body: Uint8Array): unknown {
  return JSON.parse(new TextDecoder().decode(body)) as unknown;
}

/** The SDK's ApiError for a refusal, with what its body says. */
function refusal(status: number, headers: Headers, body: Uint8Array): ApiError {
  let fields: { code?: unknown; message?: unknown; requestId?: unknown; details?: unknown } = {};
  let text = '';
  try {
    text = new TextDecoder().decode(body);
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null) fields = parsed;
  } catch {
    // Not JSON (an edge proxy's page): the text says what there is to say.
  }
  const init = {
    status,
    code: typeof fields.code === 'string' ? fields.code : undefined,
    message: typeof fields.message === 'string' ? fields.message : text.trim().slice(0, 200) || `HTTP ${status}`,
    requestId: typeof fields.requestId === 'string' ? fields.requestId : (headers.get('x-request-id') ?? undefined),
    details: Array.isArray(fields.details) ? (fields.details as { path?: string; message?: string; index?: number }[]) : undefined,
  };
  const retryAfter = /^\d+$/.test(headers.get('retry-after') ?? '') ? Number(headers.get('retry-after')) : undefined;
  if (status === 429) return new RateLimited({ ...init, retryAfter });
  if (status === 503) return new ServiceUnavailable({ ...init, retryAfter });
  return new ApiError(init);
}

function networkFailure(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * What the user reads on stderr for a failure: a refusal as `STATUS CODE: message (request id …)` with every problem
 * of a refused body on its own line; a network failure with what was asked and what to check.
 */
export function describeFailure(error: unknown): string {
  if (error instanceof ApiError) {
    const head = `${error.status}${error.code ? ` ${error.code}` : ''}: ${error.message}${error.requestId ? ` (request id ${error.requestId})` : ''}`;
    const lines = (error.details ?? []).map(
      (detail) => `  - ${detail.index !== undefined ? `[${detail.index}] ` : ''}${detail.path ?? ''}: ${detail.message ?? ''}`,
    );
    const retryAfter = error instanceof RateLimited || error instanceof ServiceUnavailable ? error.retryAfter : undefined;
    return [head + (retryAfter !== undefined ? ` (retry after ${retryAfter} s)` : ''), ...lines].join('\n');
  }
  if (error instanceof ApiTimeoutError) return `no answer in time: ${error.message}`;
  if (error instanceof ApiConnectionError) return `cannot reach the service: ${error.message}. Is it running (npm start)?`;
  return error instanceof Error ? error.message : String(error);
}
