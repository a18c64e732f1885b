import { Client, optionalRootOf, parseJson, rootOf, type ClientOptions } from './client.js';
import { errorFor } from './errors.js';
import { evidenceOf, SigningKeys } from './signing-keys.js';
import { Transport, type Outgoing, type RequestOptions, type TransportOptions } from './transport.js';
import type {
  AcceptedOffer,
  AutoAccept,
  Erasure,
  Evidence,
  Pillars,
  PortfolioCustomer,
  PortfolioItems,
  PortfolioLeftOut,
  PortfolioOffer,
  PortfolioSummary,
  RotatedAccountKey,
  Score,
  Served,
} from './types.js';
import { Webhooks, webhooksAt } from './webhooks.js';

export interface PortfolioOptions extends TransportOptions {
  /** The recipient account's key (`rsa_…`), shown once when the account was made or its key rotated. */
  accountKey: string;
  /** The read API's versioned root, for example `https://api.example.com/v1`. */
  baseUrl: string;
  /** The credentials service's versioned root; needed for `rotateKey`, `release`, `erase`, the offers and the auto-accept list. */
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
 * key; the account's key rotation, its answers to the grants offered to it (decision 50) and its
 * leaving a grant on the credentials service; and the portfolio's webhooks, fired for every grant.
 * Time and failure as on `Client`.
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
    this.#credentialsUrl = optionalRootOf(options.credentialsUrl);
    this.#verifySignatures = options.verifySignatures ?? true;
    this.#keys = new SigningKeys(this.#transport, this.#baseUrl);
    this.webhooks = webhooksAt(
      this.#transport,
      optionalRootOf(options.notifierUrl),
      (notifier) => `${notifier}/portfolio/webhooks`,
      () => ({ 'x-api-key': this.#accountKey }),
    );
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
    return this.#pages(
      '/customers',
      options,
      (page, call) => this.#read<Page<PortfolioCustomer>>(page, call),
      (item) => item,
    );
  }

  /** listPortfolioScores: the latest score of every active grant that has the qr_score scope and a score, each with its page's evidence. */
  scores(options: PageOptions = {}): PortfolioItems<Served<Score>> {
    return this.#signedItems<Score>('/scores', options);
  }

  /** listPortfolioPillars: the latest pillar breakdown of every active grant that has pillar_breakdown and a score. */
  pillars(options: PageOptions = {}): PortfolioItems<Served<Pillars>> {
    return this.#signedItems<Pillars>('/pillars', options);
  }

  /** The items of a signed list of the read API, each with its page's evidence. */
  #signedItems<T extends object>(path: string, options: PageOptions): PortfolioItems<Served<T>> {
    return this.#pages(
      path,
      options,
      (page, call) => this.#read<Page<T>>(page, call),
      (item, evidence) => ({ ...item, evidence, notModified: false }),
    );
  }

  /**
   * listPortfolioOffers (credentials service): every grant an organization offered to the account that
   * waits for its answer, in a stable order, page after page. Nothing reads an offer until it is accepted.
   */
  offers(options: PageOptions = {}): PortfolioItems<PortfolioOffer> {
    return this.#pages(
      '/offers',
      options,
      async (page, call) => ({ fields: await this.#credentialsJson<Page<PortfolioOffer>>('GET', page, call, [200]), evidence: undefined }),
      (item) => item,
    );
  }

  /**
   * acceptPortfolioOffer: the account holds the grant from now on (its organization sees the account's
   * name). Accepting an offer already accepted answers the same, so it is repeated after a network
   * failure; one that is not the account's is OfferNotFound, one that has ended or was declined OfferNotPending.
   */
  async acceptOffer(clientId: string, options: RequestOptions = {}): Promise<AcceptedOffer> {
    return this.#credentialsJson<AcceptedOffer>('POST', `/offers/${encodeURIComponent(clientId)}/accept`, options, [200, 202]);
  }

  /**
   * declinePortfolioOffer: the grant ends, and its organization sees `revocationReason: "declined_by_recipient"`.
   * Declining again changes nothing, so it is repeated after a network failure.
   */
  async declineOffer(clientId: string, options: RequestOptions = {}): Promise<void> {
    const path = `/offers/${encodeURIComponent(clientId)}/decline`;
    const received = await this.#credentials({ method: 'POST', path, idempotent: true }, options);
    if (received.status !== 204 && received.status !== 202) throw errorFor(received.status, received.headers, received.body);
  }

  /** getPortfolioAutoAccept: the organizations whose offers the account accepts as they are made. */
  async autoAccept(options: RequestOptions = {}): Promise<AutoAccept> {
    return this.#credentialsJson<AutoAccept>('GET', '/auto-accept', options, [200]);
  }

  /**
   * setPortfolioAutoAccept: the account accepts these organizations' offers as they are made (at most
   * 1,000; [] for none), replacing the list before. Offers already waiting keep waiting.
   */
  async setAutoAccept(organizationIds: string[], options: RequestOptions = {}): Promise<AutoAccept> {
    const received = await this.#credentials({ method: 'PUT', path: '/auto-accept', body: { organizationIds }, idempotent: true }, options);
    if (received.status !== 200) throw errorFor(received.status, received.headers, received.body);
    return parseJson<AutoAccept>(received.body);
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

  /**
   * eraseAccount (decision 56): destroys the account's own key and erases its name, and on every grant it
   * holds its addresses and the name the grant knew it by. The grants and their history stay, and the
   * account key keeps working. Erasing again changes nothing, so it is repeated after a network failure.
   */
  async erase(options: RequestOptions = {}): Promise<Erasure> {
    return this.#credentialsJson<Erasure>('POST', '/erasure', options, [202]);
  }

  /**
   * Every page of `resource`, fetched by `fetchPage` (the read API's, signed, or the credentials
   * service's), following nextCursor, with what the pages left out added up as they are read.
   */
  #pages<Item, Yielded, Proof>(
    resource: string,
    options: PageOptions,
    fetchPage: (page: string, call: RequestOptions) => Promise<{ fields: Page<Item>; evidence: Proof }>,
    served: (item: Item, evidence: Proof) => Yielded,
  ): PortfolioItems<Yielded> {
    const leftOut: PortfolioLeftOut = { addressNotAllowed: 0 };
    return Object.assign(this.#pagesCounting(resource, options, fetchPage, served, leftOut), { leftOut });
  }

  async *#pagesCounting<Item, Yielded, Proof>(
    resource: string,
    { limit, ...call }: PageOptions,
    fetchPage: (page: string, call: RequestOptions) => Promise<{ fields: Page<Item>; evidence: Proof }>,
    served: (item: Item, evidence: Proof) => Yielded,
    leftOut: PortfolioLeftOut,
  ): AsyncGenerator<Yielded, void, undefined> {
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams();
      if (limit !== undefined) query.set('limit', String(limit));
      if (cursor !== null) query.set('cursor', cursor);
      const page: { fields: Page<Item>; evidence: Proof } = await fetchPage(
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

  /** A JSON answer of the credentials service, or the error its status and code stand for. */
  async #credentialsJson<T>(method: 'GET' | 'POST', path: string, call: RequestOptions, expected: number[]): Promise<T> {
    const received = await this.#credentials({ method, path, idempotent: true }, call);
    if (!expected.includes(received.status)) throw errorFor(received.status, received.headers, received.body);
    return parseJson<T>(received.body);
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
    if (this.#credentialsUrl === undefined) {
      throw new TypeError('rotateKey, release, erase, the offers and the auto-accept list need the credentialsUrl option');
    }
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
