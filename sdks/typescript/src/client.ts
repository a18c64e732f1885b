import { errorFor, retryAfterSeconds } from './errors.js';
import { signingKeyId, verifyEvidence } from './signature.js';
import type {
  CreatedWebhook,
  Evidence,
  HistoryItem,
  HistoryPage,
  Jwks,
  Pillars,
  Score,
  Served,
  Webhook,
  WebhookDelivery,
  WebhookEvent,
} from './types.js';

export interface ClientOptions {
  /** The Client ID exactly as issued. */
  clientId: string;
  apiKey: string;
  /** The read API's versioned root, for example `https://api.example.com/v1`. */
  baseUrl: string;
  /** The notifier's versioned root; needed only for `webhooks`. */
  notifierUrl?: string;
  /** Check every resource's RFC 9421 signature and Content-Digest against the published keys. Default true. */
  verifySignatures?: boolean;
  /** How many times a 429 or 503 is tried again, each after the wait its Retry-After asks for. Default 3. */
  maxRetries?: number;
}

export interface HistoryOptions {
  /** Oldest scoreDate to include (`YYYY-MM-DD`, inclusive). */
  from?: string;
  /** Newest scoreDate to include (`YYYY-MM-DD`, inclusive). */
  to?: string;
  /** Dates per page (1–366); the iterator goes on through every page whatever the size. */
  limit?: number;
}

interface Received {
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** The request's path, without the query: what `@path` covers. */
  path: string;
}

interface Kept {
  etag: string;
  fields: unknown;
  evidence: Evidence;
}

/** Representations kept for conditional requests; the least recently used makes room. */
const MAX_KEPT = 256;
/** When a 429 or 503 says nothing about when to come back. */
const DEFAULT_RETRY_AFTER_SECONDS = 1;

/** A recipient's client of the Resilience Score Data API (read API and notifier). */
export class Client {
  readonly webhooks: Webhooks;
  readonly #clientId: string;
  readonly #apiKey: string;
  readonly #baseUrl: string;
  readonly #notifierUrl: string | undefined;
  readonly #verifySignatures: boolean;
  readonly #maxRetries: number;
  readonly #kept = new Map<string, Kept>();
  #jwks: Promise<Jwks> | undefined;

  constructor(options: ClientOptions) {
    const { maxRetries = 3 } = options;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError('maxRetries must be a whole number, 0 or more');
    this.#clientId = options.clientId;
    this.#apiKey = options.apiKey;
    this.#baseUrl = rootOf(options.baseUrl);
    this.#notifierUrl = options.notifierUrl === undefined ? undefined : rootOf(options.notifierUrl);
    this.#verifySignatures = options.verifySignatures ?? true;
    this.#maxRetries = maxRetries;
    this.webhooks = new Webhooks((method, resource, body) => this.#callNotifier(method, resource, body));
  }

  /** getScore: the latest score and grade (scope qr_score). */
  score(): Promise<Served<Score>> {
    return this.#read<Score>('score');
  }

  /** getPillars: the four-pillar breakdown of the latest score (scope pillar_breakdown). */
  pillars(): Promise<Served<Pillars>> {
    return this.#read<Pillars>('pillars');
  }

  /** listScoreHistory: every snapshot in the range, newest first, page after page (scope score_trend). */
  async *history({ from, to, limit }: HistoryOptions = {}): AsyncGenerator<Served<HistoryItem>, void, undefined> {
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams();
      if (from !== undefined) query.set('from', from);
      if (to !== undefined) query.set('to', to);
      if (limit !== undefined) query.set('limit', String(limit));
      if (cursor !== null) query.set('cursor', cursor);
      const page: Served<HistoryPage> = await this.#read<HistoryPage>('score/history', query);
      // Each item carries its page's evidence: the page is what was signed.
      for (const item of page.scores) yield { ...item, evidence: page.evidence, notModified: page.notModified };
      cursor = page.nextCursor;
    } while (cursor !== null);
  }

  /**
   * getSigningKeys: the JWKS as the read API publishes it (asked without the API key), also what the
   * client verifies with from now on. Keep it beside kept evidence to verify that later with verifyEvidence.
   */
  async signingKeys(): Promise<Jwks> {
    const fetched = (this.#jwks = this.#fetchJwks());
    return structuredClone(await fetched);
  }

  async #read<T>(resource: string, query = new URLSearchParams()): Promise<Served<T>> {
    const url = `${this.#customerUrl(this.#baseUrl, resource)}${query.size > 0 ? `?${query.toString()}` : ''}`;
    const kept = this.#kept.get(url);
    const received = await this.#send('GET', url, { 'x-api-key': this.#apiKey, ...(kept ? { 'if-none-match': kept.etag } : {}) });
    if (received.status === 304 && kept) {
      this.#keep(url, kept);
      return { ...(structuredClone(kept.fields) as T), evidence: kept.evidence, notModified: true };
    }
    if (received.status !== 200) throw errorFor(received.status, received.headers, received.body);

    const evidence: Evidence = {
      status: received.status,
      path: received.path,
      headers: Object.fromEntries(received.headers),
      body: received.body,
    };
    if (this.#verifySignatures) await this.#verify(evidence);
    const fields = parseJson<T>(received.body);
    const etag = received.headers.get('etag');
    if (etag) this.#keep(url, { etag, fields: structuredClone(fields), evidence });
    return { ...fields, evidence, notModified: false };
  }

  #keep(url: string, kept: Kept): void {
    this.#kept.delete(url);
    this.#kept.set(url, kept);
    if (this.#kept.size > MAX_KEPT) this.#kept.delete(this.#kept.keys().next().value as string);
  }

  /** Against the cached JWKS, fetched again once when the signature names a key it does not hold (a key change). */
  async #verify(evidence: Evidence): Promise<void> {
    let jwks = await (this.#jwks ??= this.#fetchJwks());
    const kid = signingKeyId(evidence);
    if (kid !== undefined && !jwks.keys.some((key) => key.kid === kid)) jwks = await (this.#jwks = this.#fetchJwks());
    verifyEvidence(evidence, jwks);
  }

  #fetchJwks(): Promise<Jwks> {
    // Public, and outside the versioned root: https://api.example.com/.well-known/jwks.json, asked without the key.
    const url = `${this.#baseUrl.replace(/\/v\d+$/, '')}/.well-known/jwks.json`;
    const fetched = this.#send('GET', url, {}).then((received) => {
      if (received.status !== 200) throw errorFor(received.status, received.headers, received.body);
      return parseJson<Jwks>(received.body);
    });
    // A failed fetch is not kept: the next verification tries again.
    fetched.catch(() => {
      if (this.#jwks === fetched) this.#jwks = undefined;
    });
    return fetched;
  }

  async #callNotifier(method: string, resource: string, body?: unknown): Promise<Received> {
    if (this.#notifierUrl === undefined) throw new TypeError('webhooks need the notifierUrl option');
    const received = await this.#send(
      method,
      this.#customerUrl(this.#notifierUrl, resource),
      { 'x-api-key': this.#apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body === undefined ? undefined : JSON.stringify(body),
    );
    if (received.status < 200 || received.status > 299) throw errorFor(received.status, received.headers, received.body);
    return received;
  }

  /** One request, tried again on 429 and 503 only (nothing else is known to be safe to repeat). */
  async #send(method: string, url: string, headers: Record<string, string>, body?: string): Promise<Received> {
    for (let attempt = 0; ; attempt += 1) {
      const response = await fetch(url, {
        method,
        headers: { accept: 'application/json', ...headers },
        ...(body === undefined ? {} : { body }),
        // Never followed: it would carry the API key to wherever it points. A 3xx is an ApiError.
        redirect: 'manual',
      });
      const received = {
        status: response.status,
        headers: response.headers,
        body: new Uint8Array(await response.arrayBuffer()),
        path: new URL(url).pathname,
      };
      if ((received.status === 429 || received.status === 503) && attempt < this.#maxRetries) {
        const seconds = retryAfterSeconds(response.headers) ?? DEFAULT_RETRY_AFTER_SECONDS;
        await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
        continue;
      }
      return received;
    }
  }

  #customerUrl(root: string, resource: string): string {
    return `${root}/customers/${encodeURIComponent(this.#clientId)}/${resource}`;
  }
}

/** The subscriptions of this Client ID (the notifier). */
export class Webhooks {
  readonly #call: (method: string, resource: string, body?: unknown) => Promise<Received>;

  /** @internal Made by the Client. */
  constructor(call: (method: string, resource: string, body?: unknown) => Promise<Received>) {
    this.#call = call;
  }

  /** createWebhook: the answer's `secret` is shown only this once; keep it to verify deliveries. */
  async create(url: string, events: WebhookEvent[]): Promise<CreatedWebhook> {
    return parseJson<CreatedWebhook>((await this.#call('POST', 'webhooks', { url, events })).body);
  }

  /** listWebhooks, oldest first, without secrets. */
  async list(): Promise<Webhook[]> {
    return parseJson<{ webhooks: Webhook[] }>((await this.#call('GET', 'webhooks')).body).webhooks;
  }

  /** deleteWebhook, with the deliveries it still owed. */
  async delete(id: string): Promise<void> {
    await this.#call('DELETE', `webhooks/${encodeURIComponent(id)}`);
  }

  /** listWebhookDeliveries: the latest attempts, newest first. */
  async deliveries(id: string): Promise<WebhookDelivery[]> {
    return parseJson<{ deliveries: WebhookDelivery[] }>((await this.#call('GET', `webhooks/${encodeURIComponent(id)}/deliveries`)).body)
      .deliveries;
  }
}

/** The URL without a trailing slash; throws TypeError on one that is not a URL. */
function rootOf(url: string): string {
  return new URL(url).toString().replace(/\/+$/, '');
}

function parseJson<T>(body: Uint8Array): T {
  return JSON.parse(new TextDecoder().decode(body)) as T;
}
