// The resources as the OpenAPI documents define them (libs/contracts in the repository), written out
// again because recipients install this package alone.

export type Grade = 'Sustain' | 'Optimize' | 'Strengthen' | 'Improve' | 'Prioritize';

export interface PillarScores {
  structuralIntegrity: number;
  failureResistance: number;
  deviceHealth: number;
  recoveryCapability: number;
}

/** getScore */
export interface Score {
  clientId: string;
  scoreDate: string;
  score: number;
  grade: Grade;
}

/** getPillars: no composite, by specification. */
export interface Pillars {
  clientId: string;
  scoreDate: string;
  pillarScores: PillarScores;
}

/** One entry of listScoreHistory; pillar fields only when the credential also holds pillar_breakdown. */
export interface HistoryItem {
  scoreDate: string;
  score: number;
  grade: Grade;
  pillarScores?: PillarScores;
  /** null for the oldest snapshot there is. */
  change: {
    score: number;
    grade: { from: Grade; to: Grade } | null;
    pillars?: PillarScores;
    driver?: keyof PillarScores | null;
  } | null;
}

export interface HistoryPage {
  clientId: string;
  scores: HistoryItem[];
  nextCursor: string | null;
}

/** Decision 55: a grant's score as it stood on a date, as its JWS says it. */
export interface Certificate {
  certificateId: string;
  organization: { organizationId: string };
  recipient: { clientId: string; type: string | null; name: string | null };
  score: number;
  grade: Grade;
  /** Only when the grant also holds pillar_breakdown. */
  pillarScores?: PillarScores;
  scoreDate: string;
  calculatedAt: string;
  asOf: string;
  issuedAt: string;
  /** The ids of the events it rests on: the score's calculation, then the grant's creation. */
  eventIds: string[];
}

/** GET /customers/{clientId}/certificate: the certificate and the same as a compact JWS. */
export interface SignedCertificate {
  certificate: Certificate;
  jws: string;
}

/**
 * What was received, kept so that it can be verified again later, offline, with `verifyEvidence`:
 * the status, the request's path (without the query) and the headers that the signature covers, and
 * the body exactly as received.
 */
export interface Evidence {
  status: number;
  path: string;
  /** Lowercase names. */
  headers: Record<string, string>;
  body: Uint8Array;
}

/** A read API resource as the client returns it. */
export type Served<T> = T & {
  evidence: Evidence;
  /** true when the API answered 304 and this is the representation the client kept. */
  notModified: boolean;
};

/** The document at `/.well-known/jwks.json`. */
export interface Jwks {
  keys: { kty: string; crv: string; x: string; kid: string; alg?: string; use?: string }[];
}

export type WebhookEvent = 'score.updated' | 'grade.changed' | 'authorization.ended';

/** What an organization's webhooks hear of its grants (decision 44). */
export type OrganizationAlertEvent =
  | 'authorization.expiring'
  | 'authorization.first_use'
  | 'authorization.new_address'
  | 'authorization.auth_failures'
  | 'authorization.key_leaked'
  | 'authorization.released';

/** An alert's `data`: the grant it is about, and what happened. */
export interface AlertData {
  clientId: string;
  /** The client address of the read (first_use, new_address). */
  address?: string;
  /** Failed authentications within the 5 minutes before (auth_failures). */
  failures?: number;
  /** When the grant expires (expiring). */
  expiresAt?: string;
  /** How many of the grant's webhooks the leak disabled (key_leaked, decision 50). */
  webhooksDisabled?: number;
}

/** Which `score.updated` deliveries a webhook gets (decision 45): any key present that holds lets a change through. */
export interface WebhookConditions {
  /** The new latest score is below this. */
  scoreBelow?: number;
  /** The new latest score fell by at least this from the previous latest. */
  scoreDropAtLeast?: number;
  /** The grade changed. */
  gradeChanged?: true;
}

export interface Webhook<Event extends string = WebhookEvent> {
  id: string;
  url: string;
  events: Event[];
  /** `paused` by the recipient, `disabled` by the notifier for the reason `disabledReason` gives (decisions 45 and 50). */
  status: 'active' | 'paused' | 'disabled';
  /**
   * Why it is disabled; null while active or paused. `delivery_failures`: a day of failed deliveries;
   * `key_ended`: the key that made it was cut off by a rotation without overlap; `key_leaked`: a key of its
   * grant or account was reported leaked. The last two come back only with `update(id, { url, enabled: true })`.
   */
  disabledReason?: WebhookDisabledReason | null;
  createdAt: string;
  /** Which score changes it hears of (decision 45); `{}`: every change. */
  conditions?: WebhookConditions;
}

/** Why the notifier disabled a webhook (decision 50). */
export type WebhookDisabledReason = 'delivery_failures' | 'key_ended' | 'key_leaked';

/** createWebhook's answer: the only one that carries the secret. */
export interface CreatedWebhook<Event extends string = WebhookEvent> extends Webhook<Event> {
  secret: string;
}

export interface WebhookDelivery<Event extends string = WebhookEvent> {
  messageId: string;
  /** The event, or `webhook.test` for a delivery `webhooks.test` asked for. */
  eventType: Event | 'webhook.test';
  attempt: number;
  /** `skipped`: not sent and never retried (`skipped` says why); not a failure. */
  status: 'pending' | 'succeeded' | 'failed' | 'skipped';
  responseCode: number | null;
  failure: 'response_status' | 'timeout' | 'connection_failed' | 'target_not_allowed' | null;
  /**
   * Only when skipped. `address_not_allowed`: the grant whose data it carries has an allow list, and the
   * receiver's host resolved outside it when the delivery was due.
   */
  skipped?: 'address_not_allowed';
  scheduledAt: string;
  /** When it was sent (or, skipped, when its address was checked); null until then. */
  attemptedAt: string | null;
}

/** A Standard Webhooks delivery's body; `data` never holds more than the authorization's scopes allow. */
export type WebhookPayload =
  | {
      type: 'score.updated';
      timestamp: string;
      data: { clientId: string; scoreDate: string; score: number; grade: Grade; pillarScores?: PillarScores };
    }
  | { type: 'grade.changed'; timestamp: string; data: { clientId: string; scoreDate: string; from: Grade; to: Grade } }
  | { type: 'authorization.ended'; timestamp: string; data: { clientId: string; reason: 'revoked' | 'expired'; endedAt: string } }
  | { type: OrganizationAlertEvent; timestamp: string; data: AlertData }
  | { type: 'webhook.test'; timestamp: string; data: { webhookId: string } };

// A recipient account's portfolio (decision 42).

/** getPortfolio */
export interface PortfolioSummary {
  accountId: string;
  name: string | null;
  /** How many active grants the account holds. */
  customers: number;
}

/**
 * What the portfolio's pages left out, and why: `addressNotAllowed`, the grants whose allow list does
 * not admit the address they were read from (neither listed nor in their access log).
 */
export interface PortfolioLeftOut {
  addressNotAllowed: number;
}

/**
 * The items of every page of a portfolio listing, one by one; `leftOut` adds up what the pages read so
 * far left out (final once the iteration ends).
 */
export type PortfolioItems<T> = AsyncGenerator<T, void, undefined> & { readonly leftOut: PortfolioLeftOut };

/** One active grant of the account, as its organization granted it (listPortfolioCustomers). */
export interface PortfolioCustomer {
  clientId: string;
  organizationId: string;
  recipientType: RecipientType;
  scopes: Scope[];
  expiresAt: string | null;
}

/** A grant an organization offered to the account that waits for its answer (listPortfolioOffers, decision 50). */
export interface PortfolioOffer extends Pick<
  Authorization,
  'clientId' | 'organizationId' | 'recipientType' | 'recipientName' | 'scopes' | 'expiresAt' | 'allowedCidrs'
> {
  /** When the organization made the offer. */
  offeredAt: string;
}

/** acceptPortfolioOffer: the grant as the portfolio lists it from now on. */
export type AcceptedOffer = PortfolioCustomer & {
  /** Answered 202: recorded, but not yet in the event log; the account key reads the grant once it is. */
  enforcement?: 'pending';
};

/** get/setPortfolioAutoAccept: the organizations whose offers the account accepts as they are made. */
export interface AutoAccept {
  organizationIds: string[];
}

/** rotateAccountKey: the new account key, shown this once, and until when the previous one still works. */
export interface RotatedAccountKey {
  accountKey: string;
  /** null when the overlap was 0. */
  previousKeyExpiresAt: string | null;
  /** Answered 202: recorded, but not yet in the event log; the new key works once it is. */
  enforcement?: 'pending';
}

// The credentials service (an organization's side).

export type RecipientType = 'insurance_provider' | 'auditor' | 'regulatory_body' | 'partner';
export type Scope = 'qr_score' | 'score_trend' | 'pillar_breakdown';

/** Successful reads of an authorization's credential; may lag by up to 60 s. */
export interface AuthorizationUsage {
  last24h: number;
  last30d: number;
}

/** An authorization as list, get and revoke return it: never with its key. */
export interface Authorization {
  clientId: string;
  organizationId: string;
  recipientType: RecipientType;
  recipientName: string | null;
  scopes: Scope[];
  /** The first instant the credential no longer works; null: never expires. */
  expiresAt: string | null;
  /** 'pending': offered to a recipient account that has not accepted it yet (decision 50); nothing reads it meanwhile. */
  status: 'active' | 'revoked' | 'expired' | 'pending';
  createdAt: string;
  revokedAt: string | null;
  allowedCidrs: string[] | null;
  lastUsedAt: string | null;
  usage: AuthorizationUsage;
  keyClaimed: boolean;
  claimedAt: string | null;
  claimedFromAddress: string | null;
  /** Why it was revoked (decisions 42–43, 50); null while not revoked. */
  revocationReason: 'organization' | 'released_by_recipient' | 'key_leaked' | 'declined_by_recipient' | null;
  /**
   * The recipient account (portfolio) the grant was offered to, as the organization named it, and its name once the
   * account has accepted it (decisions 42 and 50); null: a key of its own.
   */
  recipientAccountId: string | null;
  recipientAccountName: string | null;
  /** On a revocation or rotation answered 202: recorded, but not yet in the event log (it will be). */
  enforcement?: 'pending';
}

/** A one-time link by which the recipient claims the key; shown only once. */
export interface ClaimLink {
  url: string;
  expiresAt: string;
}

/** Create with `keyDelivery: 'response'`: the key, shown this once. */
export type CreatedAuthorization = Authorization & { apiKey: string };
/** Create with `keyDelivery: 'claimLink'`, and a new claim link: no key exists yet. */
export type AuthorizationWithClaimLink = Authorization & { claim: ClaimLink };
/** A rotation: the new key (shown this once), and until when the previous one still works. */
export type RotatedAuthorization = Authorization & { apiKey: string; previousKeyExpiresAt: string | null };

export interface CreateAuthorization {
  recipientType: RecipientType;
  scopes: Scope[];
  recipientName?: string;
  /** `YYYY-MM-DD` (valid through that UTC day) or an ISO date-time with offset, in the future. */
  expiresAt?: string;
  /** Up to 32 addresses or CIDR ranges reads are allowed from. */
  allowedCidrs?: string[];
  /** How the key reaches the recipient. Default 'response'. 'account': offered to `recipientAccountId`'s portfolio, read once it accepts. */
  keyDelivery?: 'response' | 'claimLink' | 'account';
  /** How long a claim link works, in seconds (3600–604800; default 259200). */
  claimValidSeconds?: number;
  /** With `keyDelivery: 'account'` (decisions 42 and 50): the recipient account the grant is offered to. */
  recipientAccountId?: string;
}

/** One read-API request whose credential lookup found the authorization (or the claim of its link). */
export interface AccessLogEntry {
  at: string;
  /** `certificate`: a score certificate fetched (decision 55); `claim`: the grant's claim link used. */
  resource: 'score' | 'pillars' | 'history' | 'certificate' | 'claim';
  status: number;
  /** The error code answered (RATE_LIMITED for a 429); null for a success or a 304. */
  code: string | null;
  clientAddress: string | null;
  requestId: string;
  /** Decision 55: a certificate fetched, the date asked for and the format served; absent for other reads. */
  certificate?: { asOf: string; format: 'json' | 'pdf' };
}

/** Who made a change (decision 54): a token's holder (`<issuer>|<subject>`), a recipient, the system or a leak reporter. */
export interface AuditActor {
  type: 'person' | 'service' | 'recipient' | 'system' | 'reporter';
  id: string;
  /** How the change was asked for; null for the system (the expiry scheduler). */
  via: 'api' | 'console' | 'cli' | 'sdk' | null;
}

/** One change in the organization's audit trail. */
export interface AuditLogEntry {
  at: string;
  /** `<resource>.<verb>`: `authorization.created`, `authorization.revoked`, `authorization.expired`, … */
  action: string;
  actor: AuditActor;
  requestId: string | null;
  address: string | null;
  /** The grant changed; null for a webhook's or an alert subscription's change. */
  clientId: string | null;
}

/** Decision 54: what a reviewer decides of a grant, and what an access review does at its due time with those undecided. */
export type AccessReviewDecision = 'keep' | 'revoke';

/** createAccessReview's body. */
export interface CreateAccessReview {
  /** When undecided items are settled: any future instant, ISO 8601 with an offset. */
  dueAt: string;
  onOverdue: AccessReviewDecision;
}

/** decideAccessReviewItem's body. */
export interface AccessReviewItemDecision {
  decision: AccessReviewDecision;
  /** The reviewer's reason, up to 1,000 characters; kept with the review and in its report. */
  note?: string | null;
}

export interface AccessReviewProgress {
  total: number;
  decided: number;
  kept: number;
  revoked: number;
  pending: number;
}

/** A review without its items, as listAccessReviews answers it. */
export interface AccessReviewSummary {
  /** `arv_` and 24 letters or digits. */
  reviewId: string;
  organizationId: string;
  /** `completed` once every item is decided, or at `dueAt`. */
  status: 'open' | 'completed';
  progress: AccessReviewProgress;
  /** When the items still undecided are settled, as `onOverdue` says. */
  dueAt: string;
  onOverdue: AccessReviewDecision;
  createdAt: string;
  /** Who began it: the token's holder. */
  createdBy: AuditActor;
  completedAt: string | null;
}

/** One grant under review, as it stood when the review began, and what was decided of it. */
export interface AccessReviewItem {
  clientId: string;
  recipientType: string;
  recipientName: string | null;
  scopes: string[];
  /** null while undecided. */
  decision: AccessReviewDecision | null;
  note: string | null;
  decidedAt: string | null;
  /** Who decided; the system for an item settled at the due time. */
  decidedBy: AuditActor | null;
  /** True when the item was settled at the due time by `onOverdue`, not by a reviewer. */
  overdue: boolean;
}

/** getAccessReview: the review with every item, in Client ID order. */
export interface AccessReview extends AccessReviewSummary {
  items: AccessReviewItem[];
}

/** One line of a review's report: the item, the grant's last use and its reads in the review's period. */
export interface AccessReviewReportLine extends AccessReviewItem {
  lastUsedAt: string | null;
  readsInPeriod: number;
}

/** The report: exactly the payload of its JWS. */
export interface AccessReviewReport extends AccessReviewSummary {
  /** The reads counted: from the review's start to its end, or to `issuedAt` while open. */
  period: { from: string; to: string };
  issuedAt: string;
  items: AccessReviewReportLine[];
}

/** getAccessReviewReport as JSON: the report and its compact JWS (EdDSA, a key of the read API's /.well-known/jwks.json). */
export interface SignedAccessReviewReport {
  report: AccessReviewReport;
  jws: string;
}

/** One score as the upstream scoring engine publishes it (the score-ingest service). */
export interface ScoreSubmission {
  organizationId: string;
  /** `YYYY-MM-DD`, not after today (UTC). */
  scoreDate: string;
  score: number;
  grade: Grade;
  pillarScores: PillarScores;
  /** When it was calculated; a recalculation for the same date replaces a score only when later. */
  calculatedAt?: string;
}

/** offboardOrganization and getOffboarding (decision 56): `pending` until every service has purged the organization. */
export interface Offboarding {
  status: 'pending' | 'done';
  startedAt: string;
  /** When the last service purged it; null while pending. */
  doneAt: string | null;
}

/** eraseRecipient and eraseAccount (decision 56): whose key was destroyed (`account:<accountId>` or `grant:<clientId>`), and when. */
export interface Erasure {
  subject: string;
  erasedAt: string;
}
