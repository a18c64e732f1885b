import { ACCESS_REVIEW_REPORT_JWS_TYPE, verifySignedJws } from './certificate.js';
import { errorFor } from './errors.js';
import { optionalRootOf, parseJson } from './client.js';
import { Transport, type Outgoing, type RequestOptions, type TransportOptions } from './transport.js';
import { Webhooks, webhooksAt } from './webhooks.js';
import type {
  AccessLogEntry,
  AccessReview,
  AccessReviewItemDecision,
  AccessReviewReport,
  AccessReviewSummary,
  AuditLogEntry,
  Authorization,
  AuthorizationUsage,
  AuthorizationWithClaimLink,
  CreateAuthorization,
  CreateAccessReview,
  CreatedAuthorization,
  Erasure,
  Jwks,
  Offboarding,
  OrganizationAlertEvent,
  RotatedAuthorization,
  ScoreSubmission,
  SignedAccessReviewReport,
} from './types.js';

export interface OrganizationOptions extends TransportOptions {
  /**
   * A bearer token (JWT) from the organization's identity provider: scope `authorizations:write` (with
   * the `org` claim) for authorizations, `scores:write` for publishing scores.
   */
  token: string;
  /**
   * The organization the authorizations belong to. Default: the token's `org` claim (read, not verified:
   * the service verifies it).
   */
  organizationId?: string;
  /** The credentials service's versioned root, for example `https://credentials.example.com/v1`; needed for `authorizations`. */
  credentialsUrl?: string;
  /** The score-ingest service's versioned root; needed for `publishScores`. */
  ingestUrl?: string;
  /** The notifier's versioned root; needed for `webhooks`, the organization's alerts. */
  notifierUrl?: string;
}

export interface PublishOptions extends RequestOptions {
  /** Scores per request, 1 to 1,000 (the most the service takes). Default 1,000. */
  batchSize?: number;
}

export interface Published {
  /** Scores the service accepted, in all. */
  accepted: number;
  /** Requests that were accepted. */
  batches: number;
}

/** The most scores one request may carry (decision 16). */
export const MAX_BATCH = 1000;

/**
 * An organization's client, or a scoring engine's: its authorizations on the credentials service and
 * the scores it publishes to score ingest. Time and failure as on `Client`: a GET, a revocation and a
 * publication (whose scores carry their `calculatedAt`) are repeated after a network failure, a create
 * or a rotation never is.
 */
export class Organization {
  readonly authorizations: Authorizations;
  /** Decision 54: the organization's access reviews (`/organizations/{organizationId}/access-reviews` on the credentials service). */
  readonly accessReviews: AccessReviews;
  /**
   * The organization's alert webhooks (decision 44, `/organizations/{organizationId}/webhooks` on the
   * notifier, with the same token as `authorizations`): what happens to its grants, each delivery's
   * `data` naming the `clientId`. The whole lifecycle, as a grant's webhooks.
   */
  readonly webhooks: Webhooks<OrganizationAlertEvent>;
  readonly #token: string;
  readonly #ingestUrl: string | undefined;
  readonly #transport: Transport;
  readonly #organizationRoot: () => string;

  constructor(options: OrganizationOptions) {
    this.#transport = new Transport(options);
    this.#token = options.token;
    this.#ingestUrl = optionalRootOf(options.ingestUrl);
    const credentialsUrl = optionalRootOf(options.credentialsUrl);
    this.webhooks = webhooksAt<OrganizationAlertEvent>(
      this.#transport,
      optionalRootOf(options.notifierUrl),
      (notifier) => `${notifier}/organizations/${encodeURIComponent(options.organizationId ?? organizationOf(this.#token))}/webhooks`,
      () => ({ authorization: `Bearer ${this.#token}` }),
    );
    this.#organizationRoot = () => {
      if (credentialsUrl === undefined) throw new TypeError('authorizations and the audit log need the credentialsUrl option');
      return `${credentialsUrl}/organizations/${encodeURIComponent(options.organizationId ?? organizationOf(this.#token))}`;
    };
    this.authorizations = new Authorizations(async (outgoing, call) =>
      this.#call({ ...outgoing, url: `${this.#organizationRoot()}/authorizations${outgoing.path}` }, call),
    );
    this.accessReviews = new AccessReviews(async (outgoing, call) =>
      this.#call({ ...outgoing, url: `${this.#organizationRoot()}/access-reviews${outgoing.path}` }, call),
    );
  }

  /**
   * listAuditLog (decision 54): every change to the organization's grants, webhooks and alert
   * subscriptions that the filters match, newest first, page after page, each with who made it.
   */
  async *auditLog(options: AuditLogOptions = {}): AsyncGenerator<AuditLogEntry, void, undefined> {
    const [call, filters] = splitCall(options);
    for await (const page of pagesOf<AuditLogEntry>((cursor) =>
      this.#call(
        {
          method: 'GET',
          url: `${this.#organizationRoot()}/audit-log${queryOf({ ...filters, cursor })}`,
          idempotent: true,
          expected: [200],
        },
        call,
      ),
    )) {
      yield* page;
    }
  }

  /**
   * offboardOrganization (decision 56, scope `organizations:delete`): revokes every grant, destroys the
   * organization's key and has every service purge what it keeps of it. Final: `confirm` must be the
   * organization id again. Answers the offboarding, `pending` until every service has purged (follow it
   * with `offboarding()`). Asked again it takes every step again, so it is repeated after a network failure.
   */
  async offboard(options: { confirm: string } & RequestOptions): Promise<Offboarding> {
    const [call, { confirm }] = splitCall(options);
    return parseJson(
      await this.#call(
        { method: 'DELETE', url: `${this.#organizationRoot()}${queryOf({ confirm })}`, idempotent: true, expected: [202] },
        call,
      ),
    );
  }

  /** getOffboarding (decision 56): `pending` or `done` (with `doneAt`), kept 30 days after it is done; OffboardingNotFound before it starts and after. */
  async offboarding(options: RequestOptions = {}): Promise<Offboarding> {
    return parseJson(
      await this.#call({ method: 'GET', url: `${this.#organizationRoot()}/offboarding`, idempotent: true, expected: [200] }, options),
    );
  }

  /**
   * Publishes every score `scores` yields (an array, a generator, an async iterable), in order, in
   * requests of up to `batchSize`; each request is sent once the previous one was accepted (202: durably
   * in the event log). A score without `calculatedAt` is given the time it is sent, so that a request
   * sent again carries exactly the same scores: the service keeps a score with the same organization,
   * date and calculation time once, however often it arrives. The first refusal stops the publication;
   * what `accepted` counted before it stays published.
   */
  async publishScores(
    scores: Iterable<ScoreSubmission> | AsyncIterable<ScoreSubmission>,
    options: PublishOptions = {},
  ): Promise<Published> {
    const { batchSize = MAX_BATCH, ...call } = options;
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH) {
      throw new TypeError(`batchSize must be a whole number from 1 to ${MAX_BATCH}`);
    }
    if (this.#ingestUrl === undefined) throw new TypeError('publishScores needs the ingestUrl option');
    const published: Published = { accepted: 0, batches: 0 };
    let batch: ScoreSubmission[] = [];
    const send = async () => {
      const calculatedAt = new Date().toISOString();
      const body = { scores: batch.map((score) => (score.calculatedAt === undefined ? { ...score, calculatedAt } : score)) };
      const received = await this.#call(
        { method: 'POST', url: `${this.#ingestUrl}/scores`, body, idempotent: true, expected: [202] },
        call,
      );
      published.accepted += parseJson<{ accepted: number }>(received).accepted;
      published.batches += 1;
      batch = [];
    };
    for await (const score of scores) {
      batch.push(score);
      if (batch.length === batchSize) await send();
    }
    if (batch.length > 0) await send();
    return published;
  }

  async #call(outgoing: Call & { url: string }, call: RequestOptions): Promise<Uint8Array> {
    const { body, expected, accept, ...rest } = outgoing;
    const request: Outgoing = {
      ...rest,
      headers: {
        authorization: `Bearer ${this.#token}`,
        ...(accept === undefined ? {} : { accept }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    };
    const received = await this.#transport.send(request, call);
    if (!expected.includes(received.status)) throw errorFor(received.status, received.headers, received.body);
    return received.body;
  }
}

interface Call {
  method: string;
  body?: unknown;
  idempotent: boolean;
  /** The statuses that mean it was done. */
  expected: number[];
  /** The representation asked for, when not JSON. */
  accept?: string;
}

type CredentialsCall = (outgoing: Call & { path: string }, call: RequestOptions) => Promise<Uint8Array>;

export interface AccessLogOptions extends RequestOptions {
  /** Entries per page (1–500); the iterator goes on through every page whatever the size. */
  limit?: number;
  /** Decision 54: entries at or after this instant (ISO 8601 with an offset). */
  from?: string;
  /** Entries before this instant. */
  to?: string;
  /** One status (`'404'`) or a class of them (`'4xx'`). */
  status?: string;
  /** The client address exactly. */
  address?: string;
  /** One resource: `'certificate'` lists the certificates fetched (decision 55). */
  resource?: AccessLogEntry['resource'];
}

export interface AuditLogOptions extends RequestOptions {
  /** Entries per page (1–500); the iterator goes on through every page whatever the size. */
  limit?: number;
  /** Entries at or after this instant (ISO 8601 with an offset). */
  from?: string;
  /** Entries before this instant. */
  to?: string;
  /** An actor's id exactly (`<issuer>|<subject>`, a Client ID, an account id), or an actor type (`person`, `system`, …). */
  actor?: string;
  /** One action, such as `authorization.revoked`. */
  action?: string;
  /** One grant's entries. */
  clientId?: string;
}

/** Decision 54's filters of the grants' list. */
export interface ListOptions extends RequestOptions {
  status?: Authorization['status'];
  recipientType?: Authorization['recipientType'];
  scope?: string;
  /** Grants with an expiry before this instant. */
  expiresBefore?: string;
  /** Grants last used before this instant, or never. */
  lastUsedBefore?: string;
  recipientAccountId?: string;
}

/** A query string of the parameters that are set, in the order given. */
function queryOf(parameters: Record<string, string | number | null | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined && value !== null) query.set(name, String(value));
  return query.size > 0 ? `?${query.toString()}` : '';
}

/** Every page of a cursor-paged list, the first without a cursor, each next one with the cursor the last answered. */
async function* pagesOf<T>(fetchPage: (cursor: string | null) => Promise<Uint8Array>): AsyncGenerator<T[], void, undefined> {
  let cursor: string | null = null;
  do {
    const body: Uint8Array = await fetchPage(cursor);
    const page = parseJson<{ items: T[]; nextCursor: string | null }>(body);
    yield page.items;
    cursor = page.nextCursor;
  } while (cursor !== null);
}

/** The RequestOptions of an options object, apart from its filters. */
function splitCall<T extends RequestOptions>({ timeout, signal, ...filters }: T): [RequestOptions, Omit<T, 'timeout' | 'signal'>] {
  return [{ ...(timeout === undefined ? {} : { timeout }), ...(signal === undefined ? {} : { signal }) }, filters];
}

export interface AccessReviewListOptions extends RequestOptions {
  /** Reviews per page (1–500); the iterator goes on through every page whatever the size. */
  limit?: number;
}

/** What a review's report is read as: the signed JSON, or the CSV of its lines. */
export interface AccessReviewReportOptions extends RequestOptions {
  /** `json` (the default): `{ report, jws }`; `csv`: the lines as RFC 4180 text, unsigned. */
  format?: 'json' | 'csv';
}

/** A review's report once its JWS is checked: the report as the JWS says it, and the key that signed it. */
export interface VerifiedAccessReviewReport {
  report: AccessReviewReport;
  kid: string;
}

/**
 * Decision 54: checks an access review's report offline against a key set saved from the read API's
 * /.well-known/jwks.json, as `verifyCertificate` checks a certificate (the same verification: EdDSA,
 * canonical base64url, the `kid` in the set). `signed` is the compact JWS or the `{ report, jws }` the
 * API answered; the report returned is read from the signed payload itself, never from beside it.
 * Throws SignatureError saying why not; no network.
 */
export function verifyAccessReviewReport(signed: string | Pick<SignedAccessReviewReport, 'jws'>, keySet: Jwks): VerifiedAccessReviewReport {
  const { payload, kid } = verifySignedJws(typeof signed === 'string' ? signed : signed.jws, keySet, [ACCESS_REVIEW_REPORT_JWS_TYPE]);
  return { report: payload as AccessReviewReport, kid };
}

/**
 * The organization's access reviews (decision 54); `organization.accessReviews`. Reading takes
 * `authorizations:read` or `:write`, creating and deciding `authorizations:write`. Every GET is
 * repeated after a network failure; a creation and a decision never are (a second creation is a
 * second review, a second decision is refused as decided already).
 */
export class AccessReviews {
  readonly #call: CredentialsCall;

  /** @internal Made by the Organization. */
  constructor(call: CredentialsCall) {
    this.#call = call;
  }

  /** createAccessReview: every grant active now becomes an item; at `dueAt` the undecided ones are kept or revoked as `onOverdue` says. */
  async create(request: CreateAccessReview, options: RequestOptions = {}): Promise<AccessReviewSummary> {
    return parseJson(await this.#call({ method: 'POST', path: '', body: request, idempotent: false, expected: [201] }, options));
  }

  /** listAccessReviews: every review with its progress, newest first, page after page. */
  async *list(options: AccessReviewListOptions = {}): AsyncGenerator<AccessReviewSummary, void, undefined> {
    const [call, { limit }] = splitCall(options);
    for await (const page of pagesOf<AccessReviewSummary>((cursor) =>
      this.#call({ method: 'GET', path: queryOf({ limit, cursor }), idempotent: true, expected: [200] }, call),
    )) {
      yield* page;
    }
  }

  /** getAccessReview: its progress and every item. */
  async get(reviewId: string, options: RequestOptions = {}): Promise<AccessReview> {
    return parseJson(
      await this.#call({ method: 'GET', path: `/${encodeURIComponent(reviewId)}`, idempotent: true, expected: [200] }, options),
    );
  }

  /**
   * decideAccessReviewItem: keeps or revokes one grant of the review (a revoke revokes the grant with
   * `revocationReason: "access_review"`); answers the review as it is after. A decision stands: a second
   * one is refused (409 ACCESS_REVIEW_ITEM_DECIDED), so it is never sent twice.
   */
  async decide(
    reviewId: string,
    clientId: string,
    decision: AccessReviewItemDecision,
    options: RequestOptions = {},
  ): Promise<AccessReview> {
    const path = `/${encodeURIComponent(reviewId)}/items/${encodeURIComponent(clientId)}`;
    return parseJson(await this.#call({ method: 'PUT', path, body: decision, idempotent: false, expected: [200] }, options));
  }

  /**
   * getAccessReviewReport: each grant with its last use, its reads in the review's period and what was
   * decided of it. As `{ report, jws }` (check it with `verify`, now or years later) or, with
   * `format: 'csv'`, the lines as CSV text.
   */
  async report(reviewId: string, options?: AccessReviewReportOptions & { format?: 'json' }): Promise<SignedAccessReviewReport>;
  async report(reviewId: string, options: AccessReviewReportOptions & { format: 'csv' }): Promise<string>;
  async report(reviewId: string, options: AccessReviewReportOptions = {}): Promise<SignedAccessReviewReport | string> {
    const { format = 'json', ...call } = options;
    if (format !== 'json' && format !== 'csv') throw new TypeError("format must be 'json' or 'csv'");
    const body = await this.#call(
      {
        method: 'GET',
        path: `/${encodeURIComponent(reviewId)}/report`,
        idempotent: true,
        expected: [200],
        ...(format === 'csv' ? { accept: 'text/csv' } : {}),
      },
      call,
    );
    return format === 'csv' ? new TextDecoder().decode(body) : parseJson<SignedAccessReviewReport>(body);
  }

  /** `verifyAccessReviewReport`: the report's JWS checked offline against a saved key set. */
  verify(signed: string | Pick<SignedAccessReviewReport, 'jws'>, keySet: Jwks): VerifiedAccessReviewReport {
    return verifyAccessReviewReport(signed, keySet);
  }
}

/** The organization's authorizations (the credentials service); `organization.authorizations`. */
export class Authorizations {
  readonly #call: CredentialsCall;

  /** @internal Made by the Organization. */
  constructor(call: CredentialsCall) {
    this.#call = call;
  }

  /**
   * createAuthorization: with `keyDelivery: 'response'` (the default) the answer carries the key, shown
   * this once; with `'claimLink'` it carries the one-time link the recipient claims the key by. Never sent
   * twice on a network failure (it would issue a second credential).
   */
  async create(request: CreateAuthorization & { keyDelivery?: 'response' }, options?: RequestOptions): Promise<CreatedAuthorization>;
  async create(request: CreateAuthorization & { keyDelivery: 'claimLink' }, options?: RequestOptions): Promise<AuthorizationWithClaimLink>;
  async create(
    request: CreateAuthorization & { keyDelivery: 'account'; recipientAccountId: string },
    options?: RequestOptions,
  ): Promise<Authorization>;
  async create(
    request: CreateAuthorization,
    options?: RequestOptions,
  ): Promise<CreatedAuthorization | AuthorizationWithClaimLink | Authorization>;
  async create(
    request: CreateAuthorization,
    options: RequestOptions = {},
  ): Promise<CreatedAuthorization | AuthorizationWithClaimLink | Authorization> {
    return parseJson(await this.#call({ method: 'POST', path: '', body: request, idempotent: false, expected: [201] }, options));
  }

  /**
   * listAuthorizations: every authorization the filters match (decision 54), newest first, without keys,
   * in one response (the API answers every match at once when no page is asked for).
   */
  async list(options: ListOptions = {}): Promise<Authorization[]> {
    const [call, filters] = splitCall(options);
    const body = await this.#call({ method: 'GET', path: queryOf({ ...filters }), idempotent: true, expected: [200] }, call);
    return parseJson<{ authorizations: Authorization[] }>(body).authorizations;
  }

  /** getAuthorization. */
  async get(clientId: string, options: RequestOptions = {}): Promise<Authorization> {
    return parseJson(
      await this.#call({ method: 'GET', path: `/${encodeURIComponent(clientId)}`, idempotent: true, expected: [200] }, options),
    );
  }

  /**
   * rotateAuthorizationKey: a new key, shown this once; the previous one works until `previousKeyExpiresAt`
   * (`overlapSeconds` from now, default 86400). Never sent twice on a network failure: a second rotation
   * would end the key the first one issued.
   */
  async rotate(clientId: string, request: { overlapSeconds?: number } = {}, options: RequestOptions = {}): Promise<RotatedAuthorization> {
    const path = `/${encodeURIComponent(clientId)}/rotate`;
    return parseJson(await this.#call({ method: 'POST', path, body: request, idempotent: false, expected: [200, 202] }, options));
  }

  /** revokeAuthorization: revoking again answers the same record, so it is repeated after a network failure like a GET. */
  async revoke(clientId: string, options: RequestOptions = {}): Promise<Authorization> {
    const path = `/${encodeURIComponent(clientId)}/revoke`;
    return parseJson(await this.#call({ method: 'POST', path, idempotent: true, expected: [200, 202] }, options));
  }

  /**
   * issueClaimLink: a new one-time link for an authorization whose key is not claimed yet; the previous
   * link stops working. Repeated after a network failure: the link of a lost answer was never seen, and
   * the one answered last is the one that works.
   */
  async claimLink(
    clientId: string,
    request: { claimValidSeconds?: number } = {},
    options: RequestOptions = {},
  ): Promise<AuthorizationWithClaimLink> {
    const path = `/${encodeURIComponent(clientId)}/claim-link`;
    return parseJson(await this.#call({ method: 'POST', path, body: request, idempotent: true, expected: [200] }, options));
  }

  /** listAccessLog: every read through this authorization that the filters match (decision 54), newest first, page after page. */
  async *accessLog(clientId: string, options: AccessLogOptions = {}): AsyncGenerator<AccessLogEntry, void, undefined> {
    const [call, filters] = splitCall(options);
    for await (const page of pagesOf<AccessLogEntry>((cursor) =>
      this.#call(
        {
          method: 'GET',
          path: `/${encodeURIComponent(clientId)}/access-log${queryOf({ ...filters, cursor })}`,
          idempotent: true,
          expected: [200],
        },
        call,
      ),
    )) {
      yield* page;
    }
  }

  /**
   * eraseRecipient (decision 56): destroys the recipient's key and erases its name, contact fields and every
   * address seen for it from every store; the grant itself stays, not revoked. Erasing again changes
   * nothing, so it is repeated after a network failure.
   */
  async erase(clientId: string, options: RequestOptions = {}): Promise<Erasure> {
    const path = `/${encodeURIComponent(clientId)}/erasure`;
    return parseJson(await this.#call({ method: 'POST', path, idempotent: true, expected: [202] }, options));
  }

  /** The authorization's successful reads (last 24 h, last 30 days) and its last one, from its record; may lag by up to 60 s. */
  async usage(clientId: string, options: RequestOptions = {}): Promise<AuthorizationUsage & { lastUsedAt: string | null }> {
    const { usage, lastUsedAt } = await this.get(clientId, options);
    return { ...usage, lastUsedAt };
  }
}

/** The `org` claim of a JWT, read without verifying it (the service verifies). */
function organizationOf(token: string): string {
  const payload = token.split('.')[1];
  let org: unknown;
  try {
    const bytes = Uint8Array.from(atob((payload ?? '').replace(/-/g, '+').replace(/_/g, '/')), (char) => char.charCodeAt(0));
    org = (JSON.parse(new TextDecoder().decode(bytes)) as { org?: unknown }).org;
  } catch {
    org = undefined;
  }
  if (typeof org !== 'string') throw new TypeError('the token has no org claim: give the organizationId option');
  return org;
}
