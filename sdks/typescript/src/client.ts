import { errorFor } from './errors.js';
import { evidenceOf, SigningKeys } from './signing-keys.js';
import { Transport, type RequestOptions, type TransportOptions } from './transport.js';
import { verifyCertificate } from './certificate.js';
import type { Evidence, HistoryItem, HistoryPage, Jwks, Pillars, Score, Served, SignedCertificate } from './types.js';
import { Webhooks, webhooksAt } from './webhooks.js';

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
  readonly #verifySignatures: boolean;
  readonly #transport: Transport;
  readonly #keys: SigningKeys;
  readonly #kept = new Map<string, Kept>();

  constructor(options: ClientOptions) {
    this.#transport = new Transport(options);
    this.#clientId = options.clientId;
    this.#apiKey = options.apiKey;
    this.#baseUrl = rootOf(options.baseUrl);
    this.#verifySignatures = options.verifySignatures ?? true;
    this.#keys = new SigningKeys(this.#transport, this.#baseUrl);
    this.webhooks = webhooksAt(
      this.#transport,
      optionalRootOf(options.notifierUrl),
      (notifier) => this.#customerUrl(notifier, 'webhooks'),
      () => ({ 'x-api-key': this.#apiKey }),
    );
  }

  /** getScore: the latest score and grade (scope qr_score). */
  score(options: RequestOptions = {}): Promise<Served<Score>> {
    return this.#read<Score>('score', new URLSearchParams(), options);
  }

  /** getPillars: the four-pillar breakdown of the latest score (scope pillar_breakdown). */
  pillars(options: RequestOptions = {}): Promise<Served<Pillars>> {
    return this.#read<Pillars>('pillars', new URLSearchParams(), options);
  }

  /**
   * getCertificate (decision 55): the score as it stood on `asOf` (`YYYY-MM-DD`, today in UTC when
   * omitted), with its compact JWS (scope qr_score; pillars only with pillar_breakdown). With
   * verifySignatures, the JWS is checked against the published keys too, and the certificate
   * returned is the one it says. Keep the JWS and a saved key set: `verifyCertificate` checks them
   * offline, years later.
   */
  async certificate(asOf?: string, options: RequestOptions = {}): Promise<Served<SignedCertificate>> {
    const query = new URLSearchParams(asOf === undefined ? {} : { asOf });
    const served = await this.#read<SignedCertificate>('certificate', query, options);
    if (!this.#verifySignatures) return served;
    const { certificate } = verifyCertificate(served.jws, await this.#keys.current(options));
    return { ...served, certificate };
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
  signingKeys(options: RequestOptions = {}): Promise<Jwks> {
    return this.#keys.fetch(options);
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

    const evidence = evidenceOf(received);
    if (this.#verifySignatures) await this.#keys.verify(evidence, call);
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

  #customerUrl(root: string, resource: string): string {
    return `${root}/customers/${encodeURIComponent(this.#clientId)}/${resource}`;
  }
}

/** The URL without a trailing slash; throws TypeError on one that is not a URL. */
export function rootOf(url: string): string {
  return new URL(url).toString().replace(/\/+$/, '');
}

/** rootOf of an optional URL. */
export function optionalRootOf(url: string | undefined): string | undefined {
  return url === undefined ? undefined : rootOf(url);
}

export function parseJson<T>(body: Uint8Array): T {
  return JSON.parse(new TextDecoder().decode(body)) as T;
}
