import { errorFor } from './errors.js';
import { signingKeyId, verifyEvidence } from './signature.js';
import { Transport, type Received, type RequestOptions, type TransportOptions } from './transport.js';
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

export interface ClientOptions extends TransportOptions {
  /** The Client ID exactly as issued. */
  clientId: string;
  apiKey: string;
  /** The read API's versioned root, for example `https://api.example.com/v1`. */
  baseUrl: string;
  /** The notifier's versioned root; needed only for `webhooks`. */
  notifierUrl?: string;
  /** Check every resource's RFC 9421 signature and Content-Digest against the published keys. Default true. */
  verifySignatures?: boolean;
  /**
   * How many times a request is tried again: a 429 or 503 after the wait its Retry-After asks for; a
   * connection error, a timeout, a 502 or a 504 of a GET after an exponential backoff with full jitter. Default 3.
   */
  maxRetries?: number;
}

export interface HistoryOptions extends RequestOptions {
  /** Oldest scoreDate to include (`YYYY-MM-DD`, inclusive). */
  from?: string;
  /** Newest scoreDate to include (`YYYY-MM-DD`, inclusive). */
  to?: string;
  /** Dates per page (1–366); the iterator goes on through every page whatever the size. */
  limit?: number;
}

interface Kept {
  etag: string;
  fields: unknown;
  evidence: Evidence;
}

/** Representations kept for conditional requests; the least recently used makes room. */
const MAX_KEPT = 256;

/** A recipient's client of the Resilience Score Data API (read API and notifier). */
export class Client {
  readonly webhooks: Webhooks;
  readonly #clientId: string;
  readonly #apiKey: string;
  readonly #baseUrl: string;
  readonly #notifierUrl: string | undefined;
  readonly #verifySignatures: boolean;
  readonly #transport: Transport;
  readonly #kept = new Map<string, Kept>();
  #jwks: Promise<Jwks> | undefined;

  constructor(options: ClientOptions) {
    this.#transport = new Transport(options);
    this.#clientId = options.clientId;
    this.#apiKey = options.apiKey;
    this.#baseUrl = rootOf(options.baseUrl);
    this.#notifierUrl = options.notifierUrl === undefined ? undefined : rootOf(options.notifierUrl);
    this.#verifySignatures = options.verifySignatures ?? true;
    this.webhooks = new Webhooks((method, resource, body, call) => this.#callNotifier(method, resource, body, call));
  }

  /** getScore: the latest score and grade (scope qr_score). */
  score(options: RequestOptions = {}): Promise<Served<Score>> {
    return this.#read<Score>('score', new URLSearchParams(), options);
  }

  /** getPillars: the four-pillar breakdown of the latest score (scope pillar_breakdown). */
  pillars(options: RequestOptions = {}): Promise<Served<Pillars>> {
    return this.#read<Pillars>('pillars', new URLSearchParams(), options);
  }

  /** listScoreHistory: every snapshot in the range, newest first, page after page (scope score_trend). */
  async *history({ from, to, limit, ...call }: HistoryOptions = {}): AsyncGenerator<Served<HistoryItem>, void, undefined> {
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams();
      if (from !== undefined) query.set('from', from);
      if (to !== undefined) query.set('to', to);
      if (limit !== undefined) query.set('limit', String(limit));
      if (cursor !== null) query.set('cursor', cursor);
      const page: Served<HistoryPage> = await this.#read<HistoryPage>('score/history', query, call);
      // Each item carries its page's evidence: the page is what was signed.
      for (const item of page.scores) yield { ...item, evidence: page.evidence, notModified: page.notModified };
      cursor = page.nextCursor;
    } while (cursor !== null);
  }

  /**
   * getSigningKeys: the JWKS as the read API publishes it (asked without the API key), also what the
   * client verifies with from now on. Keep it beside kept evidence to verify that later with verifyEvidence.
   */
  async signingKeys(options: RequestOptions = {}): Promise<Jwks> {
    const fetched = (this.#jwks = this.#fetchJwks(options));
    return structuredClone(await fetched);
  }

  async #read<T>(resource: string, query: URLSearchParams, call: RequestOptions): Promise<Served<T>> {
    const url = `${this.#customerUrl(this.#baseUrl, resource)}${query.size > 0 ? `?${query.toString()}` : ''}`;
    const kept = this.#kept.get(url);
    const headers = { 'x-api-key': this.#apiKey, ...(kept ? { 'if-none-match': kept.etag } : {}) };
    const received = await this.#transport.send({ method: 'GET', url, headers, idempotent: true }, call);
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
    if (this.#verifySignatures) await this.#verify(evidence, call);
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
  async #verify(evidence: Evidence, call: RequestOptions): Promise<void> {
    let jwks = await (this.#jwks ??= this.#fetchJwks(call));
    const kid = signingKeyId(evidence);
    if (kid !== undefined && !jwks.keys.some((key) => key.kid === kid)) jwks = await (this.#jwks = this.#fetchJwks(call));
    verifyEvidence(evidence, jwks);
  }

  #fetchJwks(call: RequestOptions): Promise<Jwks> {
    // Public, and outside the versioned root: https://api.example.com/.well-known/jwks.json, asked without the key.
    const url = `${this.#baseUrl.replace(/\/v\d+$/, '')}/.well-known/jwks.json`;
    const fetched = this.#transport.send({ method: 'GET', url, headers: {}, idempotent: true }, call).then((received) => {
      if (received.status !== 200) throw errorFor(received.status, received.headers, received.body);
      return parseJson<Jwks>(received.body);
    });
    // A failed fetch is not kept: the next verification tries again.
    fetched.catch(() => {
      if (this.#jwks === fetched) this.#jwks = undefined;
    });
    return fetched;
  }

  async #callNotifier(method: string, resource: string, body: unknown, call: RequestOptions): Promise<Received> {
    if (this.#notifierUrl === undefined) throw new TypeError('webhooks need the notifierUrl option');
    const received = await this.#transport.send(
      {
        method,
        url: this.#customerUrl(this.#notifierUrl, resource),
        headers: { 'x-api-key': this.#apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        // A DELETE leaves the same state however often it is sent; a second POST would subscribe twice.
        idempotent: method !== 'POST',
      },
      call,
    );
    if (received.status < 200 || received.status > 299) throw errorFor(received.status, received.headers, received.body);
    return received;
  }

  #customerUrl(root: string, resource: string): string {
    return `${root}/customers/${encodeURIComponent(this.#clientId)}/${resource}`;
  }
}

type NotifierCall = (method: string, resource: string, body: unknown, call: RequestOptions) => Promise<Received>;

/** The subscriptions of this Client ID (the notifier). */
export class Webhooks {
  readonly #call: NotifierCall;

  /** @internal Made by the Client. */
  constructor(call: NotifierCall) {
    this.#call = call;
  }

  /** createWebhook: the answer's `secret` is shown only this once; keep it to verify deliveries. Never sent twice on a network failure. */
  async create(url: string, events: WebhookEvent[], options: RequestOptions = {}): Promise<CreatedWebhook> {
    return parseJson<CreatedWebhook>((await this.#call('POST', 'webhooks', { url, events }, options)).body);
  }

  /** listWebhooks, oldest first, without secrets. */
  async list(options: RequestOptions = {}): Promise<Webhook[]> {
    return parseJson<{ webhooks: Webhook[] }>((await this.#call('GET', 'webhooks', undefined, options)).body).webhooks;
  }

  /** deleteWebhook, with the deliveries it still owed. */
  async delete(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#call('DELETE', `webhooks/${encodeURIComponent(id)}`, undefined, options);
  }

  /** listWebhookDeliveries: the latest attempts, newest first. */
  async deliveries(id: string, options: RequestOptions = {}): Promise<WebhookDelivery[]> {
    const received = await this.#call('GET', `webhooks/${encodeURIComponent(id)}/deliveries`, undefined, options);
    return parseJson<{ deliveries: WebhookDelivery[] }>(received.body).deliveries;
  }
}

/** The URL without a trailing slash; throws TypeError on one that is not a URL. */
export function rootOf(url: string): string {
  return new URL(url).toString().replace(/\/+$/, '');
}

export function parseJson<T>(body: Uint8Array): T {
  return JSON.parse(new TextDecoder().decode(body)) as T;
}
