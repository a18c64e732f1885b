import { Client, parseJson, rootOf, type ClientOptions } from './client.js';
import { errorFor } from './errors.js';
import { evidenceOf, SigningKeys } from './signing-keys.js';
import { Transport, type Outgoing, type RequestOptions, type TransportOptions } from './transport.js';
import type {
  Evidence,
  Pillars,
  PortfolioCustomer,
  PortfolioItems,
  PortfolioLeftOut,
  PortfolioSummary,
  RotatedAccountKey,
  Score,
  Served,
} from './types.js';
import { Webhooks } from './webhooks.js';

export interface PortfolioOptions extends TransportOptions {
  /** The recipient account's key (`rsa_…`), shown once when the account was made or its key rotated. */
  accountKey: string;
  /** The read API's versioned root, for example `https://api.example.com/v1`. */
  baseUrl: string;
  /** The credentials service's versioned root; needed for `rotateKey` and `release`. */
  credentialsUrl?: string;
  /** The notifier's versioned root; needed for `webhooks` (and the webhooks of the clients `client()` makes). */
  notifierUrl?: string;
  /** Check every page's RFC 9421 signature and Content-Digest against the published keys. Default true. */
  verifySignatures?: boolean;
}

export interface PageOptions extends RequestOptions {
  /** Items per page (1–100, the API's default 50); the iterator goes on through every page whatever the size. */
  limit?: number;
}

interface Page<Item> {
  items: Item[];
  nextCursor: string | null;
  /** Absent from a server older than the allow list's bound on pages. */
  leftOut?: PortfolioLeftOut;
}

/**
 * A recipient account's client (decision 42): every grant the account holds, read with one account
 * key; the account's key rotation and its leaving a grant on the credentials service; and the
 * portfolio's webhooks, fired for every grant. Time and failure as on `Client`.
 */
export class Portfolio {
  /** The portfolio's webhooks (`/portfolio/webhooks`): every delivery names its grant's `clientId`. */
  readonly webhooks: Webhooks;
  #accountKey: string;
  readonly #options: PortfolioOptions;
  readonly #baseUrl: string;
  readonly #credentialsUrl: string | undefined;
  readonly #verifySignatures: boolean;
  readonly #transport: Transport;
  readonly #keys: SigningKeys;

  constructor(options: PortfolioOptions) {
    this.#transport = new Transport(options);
    this.#options = options;
    this.#accountKey = options.accountKey;
    this.#baseUrl = rootOf(options.baseUrl);
    this.#credentialsUrl = options.credentialsUrl === undefined ? undefined : rootOf(options.credentialsUrl);
    const notifierUrl = options.notifierUrl === undefined ? undefined : rootOf(options.notifierUrl);
    this.#verifySignatures = options.verifySignatures ?? true;
    this.#keys = new SigningKeys(this.#transport, this.#baseUrl);
    this.webhooks = new Webhooks({
      transport: this.#transport,
      collection: () => {
        if (notifierUrl === undefined) throw new TypeError('webhooks need the notifierUrl option');
        return `${notifierUrl}/portfolio/webhooks`;
      },
      headers: () => ({ 'x-api-key': this.#accountKey }),
    });
  }

  /** getPortfolio: the account's id, name and how many active grants it holds. */
  async summary(options: RequestOptions = {}): Promise<PortfolioSummary> {
    return (await this.#read<PortfolioSummary>('', options)).fields;
  }

  /**
   * listPortfolioCustomers: every active grant of the account, in a stable order, page after page; a
   * grant whose allow list does not admit this address is left out and counted in `leftOut`.
   */
  customers(options: PageOptions = {}): PortfolioItems<PortfolioCustomer> {
    return this.#pages<PortfolioCustomer>('/customers', options, (item) => item);
  }

  /** listPortfolioScores: the latest score of every active grant that has the qr_score scope and a score, each with its page's evidence. */
  scores(options: PageOptions = {}): PortfolioItems<Served<Score>> {
    return this.#pages<Score, Served<Score>>('/scores', options, (item, evidence) => ({ ...item, evidence, notModified: false }));
  }

  /** listPortfolioPillars: the latest pillar breakdown of every active grant that has pillar_breakdown and a score. */
  pillars(options: PageOptions = {}): PortfolioItems<Served<Pillars>> {
    return this.#pages<Pillars, Served<Pillars>>('/pillars', options, (item, evidence) => ({ ...item, evidence, notModified: false }));
  }

  /**
   * A `Client` for one grant the account holds, reading with the account key (the per-customer paths
   * accept it, with the checks the grant's own key would get); the same URLs and time and failure
   * options. It keeps the key it was made with: make it again after `rotateKey`.
   */
  client(clientId: string, options: Partial<Omit<ClientOptions, 'clientId' | 'apiKey'>> = {}): Client {
    const { accountKey: _key, credentialsUrl: _credentials, ...shared } = this.#options;
    return new Client({ ...shared, ...options, clientId, apiKey: this.#accountKey });
  }

  /**
   * rotateAccountKey: a new account key, shown this once; the previous one works until
   * `previousKeyExpiresAt` (`overlapSeconds` from now, 0 to 86,400; default a day). From then on this
   * Portfolio sends the new key. Never sent twice on a network failure: a second rotation would end the
   * key the first one issued.
   */
  async rotateKey(request: { overlapSeconds?: number } = {}, options: RequestOptions = {}): Promise<RotatedAccountKey> {
    const received = await this.#credentials({ method: 'POST', path: '/keys/rotate', body: request, idempotent: false }, options);
    if (received.status !== 201 && received.status !== 202) throw errorFor(received.status, received.headers, received.body);
    const rotated = parseJson<RotatedAccountKey>(received.body);
    this.#accountKey = rotated.accountKey;
    return rotated;
  }

  /**
   * releaseGrant: the account leaves the grant, which ends as a revocation does (the organization sees
   * `revocationReason: "released_by_recipient"`). Releasing a grant already ended changes nothing, so it
   * is repeated after a network failure; a grant the account does not hold is AuthorizationNotFound.
   */
  async release(clientId: string, options: RequestOptions = {}): Promise<void> {
    const path = `/customers/${encodeURIComponent(clientId)}`;
    const received = await this.#credentials({ method: 'DELETE', path, idempotent: true }, options);
    if (received.status !== 204 && received.status !== 202) throw errorFor(received.status, received.headers, received.body);
  }

  #pages<Item, Yielded = Item>(
    resource: string,
    options: PageOptions,
    served: (item: Item, evidence: Evidence) => Yielded,
  ): PortfolioItems<Yielded> {
    const leftOut: PortfolioLeftOut = { addressNotAllowed: 0 };
    return Object.assign(this.#pagesCounting(resource, options, served, leftOut), { leftOut });
  }

  async *#pagesCounting<Item, Yielded>(
    resource: string,
    { limit, ...call }: PageOptions,
    served: (item: Item, evidence: Evidence) => Yielded,
    leftOut: PortfolioLeftOut,
  ): AsyncGenerator<Yielded, void, undefined> {
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams();
      if (limit !== undefined) query.set('limit', String(limit));
      if (cursor !== null) query.set('cursor', cursor);
      const page: { fields: Page<Item>; evidence: Evidence } = await this.#read<Page<Item>>(
        `${resource}${query.size > 0 ? `?${query.toString()}` : ''}`,
        call,
      );
      // Counted before the page's items are handed out: a caller that stops early has what it was shown counted.
      leftOut.addressNotAllowed += page.fields.leftOut?.addressNotAllowed ?? 0;
      // Each item carries its page's evidence: the page is what was signed.
      for (const item of page.fields.items) yield served(item, page.evidence);
      cursor = page.fields.nextCursor;
    } while (cursor !== null);
  }

  async #read<T>(resource: string, call: RequestOptions): Promise<{ fields: T; evidence: Evidence }> {
    const url = `${this.#baseUrl}/portfolio${resource}`;
    const received = await this.#transport.send({ method: 'GET', url, headers: { 'x-api-key': this.#accountKey }, idempotent: true }, call);
    if (received.status !== 200) throw errorFor(received.status, received.headers, received.body);
    const evidence = evidenceOf(received);
    // Before the body is even parsed: data that does not verify is never returned.
    if (this.#verifySignatures) await this.#keys.verify(evidence, call);
    return { fields: parseJson<T>(received.body), evidence };
  }

  async #credentials(
    outgoing: Omit<Outgoing, 'url' | 'headers' | 'body'> & { path: string; body?: unknown },
    call: RequestOptions,
  ): ReturnType<Transport['send']> {
    if (this.#credentialsUrl === undefined) throw new TypeError('rotateKey and release need the credentialsUrl option');
    const { path, body, ...rest } = outgoing;
    return this.#transport.send(
      {
        ...rest,
        url: `${this.#credentialsUrl}/portfolio${path}`,
        headers: { 'x-api-key': this.#accountKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      },
      call,
    );
  }
}
