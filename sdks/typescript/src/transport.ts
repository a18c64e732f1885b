import { ApiConnectionError, ApiTimeoutError, retryAfterMilliseconds } from './errors.js';
import { VERSION } from './version.js';

/** What every client of this package shares about time and failure; each option has its default. */
export interface TransportOptions {
  /** Milliseconds a request may take, its body included, before it fails with ApiTimeoutError (each attempt its own). Default 10,000. */
  timeout?: number;
  /** How many times a failed request is tried again (see each operation for what is retried). Default 3. */
  maxRetries?: number;
  /** The longest wait between two attempts in milliseconds, whatever Retry-After asks. Default 60,000. */
  maxRetryWait?: number;
  /** The fetch to send with (a proxy agent, a test double, instrumentation). Default: the global fetch, looked up at each call. */
  fetch?: typeof fetch;
  /**
   * A product token put before the SDK's own in the User-Agent (`rsd-cli/1.2.0`): a tool built on the SDK
   * says so, and the audit trail records the change as made through it.
   */
  userAgent?: string;
}

/** What each call may set for itself. */
export interface RequestOptions {
  /** Milliseconds for this call's attempts, instead of the client's `timeout`. */
  timeout?: number;
  /** Aborts the call (and any wait between attempts); the call then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface Received {
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** The request's path, without the query: what `@path` covers. */
  path: string;
}

export interface Outgoing {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /**
   * Whether sending this request twice does no more than sending it once (every GET; a POST the API
   * defines as repeatable). Only such a request is sent again after a connection error, a timeout, a 502
   * or a 504, when it may have been acted on already.
   */
  idempotent: boolean;
}

export const USER_AGENT = `resilience-score-typescript/${VERSION}`;
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RETRY_WAIT_MS = 60_000;
/** The first backoff's ceiling; each further attempt doubles it (full jitter: a uniform wait below it). */
const BACKOFF_BASE_MS = 500;

/** The statuses that say the request was not acted on (the API's 429 and 503): repeated even for a POST. */
const NOT_ACTED_ON = new Set([429, 503]);
/** A gateway's answers: the request may or may not have reached the service, so only an idempotent one is repeated. */
const GATEWAY_FAILURES = new Set([502, 504]);

/** Sends with timeouts, cancellation and retries; one per client. */
export class Transport {
  readonly #timeout: number;
  readonly #maxRetries: number;
  readonly #maxRetryWait: number;
  readonly #fetch: typeof fetch;
  readonly #userAgent: string;

  constructor(options: TransportOptions) {
    const { timeout = DEFAULT_TIMEOUT_MS, maxRetries = 3, maxRetryWait = DEFAULT_MAX_RETRY_WAIT_MS } = options;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError('maxRetries must be a whole number, 0 or more');
    if (!(timeout > 0) || !Number.isFinite(timeout)) throw new TypeError('timeout must be a positive number of milliseconds');
    if (!(maxRetryWait >= 0) || !Number.isFinite(maxRetryWait)) throw new TypeError('maxRetryWait must be 0 or more milliseconds');
    this.#timeout = timeout;
    this.#maxRetries = maxRetries;
    this.#maxRetryWait = maxRetryWait;
    if (options.userAgent !== undefined && !/^[!-~]+(?: [!-~]+)*$/.test(options.userAgent)) {
      throw new TypeError('userAgent must be printable ASCII product tokens');
    }
    this.#userAgent = options.userAgent === undefined ? USER_AGENT : `${options.userAgent} ${USER_AGENT}`;
    const custom = options.fetch;
    this.#fetch = custom ?? ((input, init) => globalThis.fetch(input, init));
  }

  /**
   * One request: a 429 or 503 is tried again after its Retry-After; a connection error, a timeout, a 502
   * or a 504 only when the request is idempotent, after an exponential backoff with full jitter (or the
   * Retry-After a 502 or 504 sent). Each wait is capped by maxRetryWait. The last answer is returned
   * whatever its status; a network failure that is not retried throws ApiConnectionError or ApiTimeoutError.
   */
  async send(outgoing: Outgoing, options: RequestOptions = {}): Promise<Received> {
    const timeout = options.timeout ?? this.#timeout;
    if (!(timeout > 0) || !Number.isFinite(timeout)) throw new TypeError('timeout must be a positive number of milliseconds');
    const { signal } = options;
    for (let attempt = 0; ; attempt += 1) {
      signal?.throwIfAborted();
      const retriesLeft = attempt < this.#maxRetries;
      let received: Received;
      try {
        received = await this.#attempt(outgoing, timeout, signal);
      } catch (error) {
        if (!(error instanceof ApiConnectionError) || !outgoing.idempotent || !retriesLeft) throw error;
        await sleep(this.#backoff(attempt), signal);
        continue;
      }
      const retried = NOT_ACTED_ON.has(received.status) || (GATEWAY_FAILURES.has(received.status) && outgoing.idempotent);
      if (!retried || !retriesLeft) return received;
      const asked = retryAfterMilliseconds(received.headers);
      await sleep(asked === undefined ? this.#backoff(attempt) : Math.min(asked, this.#maxRetryWait), signal);
    }
  }

  /** Full jitter: uniform between 0 and the attempt's ceiling, which doubles each time up to maxRetryWait. */
  #backoff(attempt: number): number {
    return Math.random() * Math.min(this.#maxRetryWait, BACKOFF_BASE_MS * 2 ** attempt);
  }

  async #attempt(outgoing: Outgoing, timeout: number, signal: AbortSignal | undefined): Promise<Received> {
    const timer = AbortSignal.timeout(timeout);
    const either = signal ? AbortSignal.any([signal, timer]) : timer;
    try {
      const response = await this.#fetch(outgoing.url, {
        method: outgoing.method,
        headers: { accept: 'application/json', 'user-agent': this.#userAgent, ...outgoing.headers },
        ...(outgoing.body === undefined ? {} : { body: outgoing.body }),
        // Never followed: it would carry the credential to wherever it points. A 3xx is an ApiError.
        redirect: 'manual',
        signal: either,
      });
      // The body is read under the same timeout: a server that stalls halfway is a timeout too.
      const body = new Uint8Array(await response.arrayBuffer());
      return { status: response.status, headers: response.headers, body, path: new URL(outgoing.url).pathname };
    } catch (error) {
      // The caller's own cancellation is theirs: rethrown as it came, never retried.
      if (signal?.aborted) throw signal.reason;
      const target = `${outgoing.method} ${new URL(outgoing.url).origin}${new URL(outgoing.url).pathname}`;
      if (timer.aborted) throw new ApiTimeoutError(`${target}: no complete answer within ${timeout} ms`, { cause: error });
      throw new ApiConnectionError(`${target}: ${describe(error)}`, { cause: error });
    }
  }
}

/** The network failure in a few words: fetch's own message ('fetch failed') says little, its cause says what. */
function describe(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}

/** Waits, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
