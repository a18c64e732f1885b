import type { z } from 'zod';
import type {
  accessLogEntrySchema,
  accessReviewItemSchema,
  alertSchema,
  auditLogEntrySchema,
  authorizationSchema,
  certificateSchema,
  historyItemSchema,
  portfolioOfferSchema,
  webhookDeliverySchema,
} from '@rsd/contracts';
import { CODES_NOT_SENT, csvLine, ERROR_STATUS, errorBody, type ErrorCode } from '@rsd/platform';

/*
 * The examples of every request and response in the OpenAPI documents (decision 57), all made of one
 * story: the organization Northwind Logistics shares its score with its insurer, Contoso Insurance, which
 * holds the grant in a recipient account; the scoring engine published the score of 20 November 2026.
 * Each document's bodies are named by their component (`Authorization`), so an operation's example is
 * whatever its schema's is; error bodies are made from the codes each response's description names.
 * The values have the shapes the services make (prefixes, lengths); none is a live key or token.
 */

const ORGANIZATION_ID = 'northwind-logistics';
const OTHER_ORGANIZATION_ID = 'fabrikam-shipping';
const CLIENT_ID = 'rs_3kTMd9Qx7LwZp2VnB8cY1fRe';
const OTHER_CLIENT_ID = 'rs_9pLwX4mQ2vTn7KcR5bZy8HdA';
const ACCOUNT_ID = 'rcp_7Hq2LmX9pRt4Kc8Vw1Nz3Bd6';
const API_KEY = 'rsk_Xq7vN2pL9wK4mT8cR3bZ6yH1dF5gJ0sA2eU7iO4kW9nM3fV6xC';
const ACCOUNT_KEY = 'rsa_Hd4mP8wQ2xL7vN3cK9bT5zR1yF6gJ0sA2eU7iO4kW9nM3fV6xC';
const RECIPIENT_NAME = 'Contoso Insurance';
const REVIEW_ID = 'arv_4f9Qk2LmX8pR3tV7wY1zA6bC';
const WEBHOOK_ID = 'wh_7Qm2ZkP9xW4nTcL8vB3dRf6Y';
const MESSAGE_ID = 'msg_2KWPBgLlAfxdpx2AI54pPJ85';
const WEBHOOK_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
const REQUEST_ID = '7f3c9a2e-41d8-4b6f-9c1a-5e2d8b7f0a14';
const SIGNING_KID = 'rsd-2026-11';
// A compact JWS's shape (header.payload.signature, base64url); the SDKs and `rsd verify` check real ones.
const JWS =
  'eyJhbGciOiJFZERTQSIsImtpZCI6InJzZC0yMDI2LTExIiwidHlwIjoicnNkLWNlcnRpZmljYXRlK2pzb24ifQ.eyJjZXJ0aWZpY2F0ZUlkIjoiY3J0XzVxWHpLOW1MMnZUOHBSNG5XMWNCN2EifQ.' +
  'Vq3n8bS0kXl2mZcR7dYtP4wF1hG9jK6aE5uO0iN3xQ2sD8fL7vC4bM1zT6yH9gJ0rA5eW3kU2oI7pS4nB8cR';

const SCORE_DATE = '2026-11-20';
const CALCULATED_AT = '2026-11-20T06:00:00.000Z';
const NOW = '2026-11-21T08:00:00.000Z';
const GRANTED_AT = '2026-09-01T09:30:00.000Z';
const EXPIRES_AT = '2027-09-01T00:00:00.000Z';
const DUE_AT = '2026-12-15T17:00:00.000Z';

const pillarScores = { structuralIntegrity: 81, failureResistance: 74, deviceHealth: 69, recoveryCapability: 85 };
const score = { clientId: CLIENT_ID, scoreDate: SCORE_DATE, score: 78, grade: 'Optimize' as const };
const pillars = { clientId: CLIENT_ID, scoreDate: SCORE_DATE, pillarScores };
const history: z.input<typeof historyItemSchema>[] = [
  {
    scoreDate: SCORE_DATE,
    score: 78,
    grade: 'Optimize',
    pillarScores,
    change: {
      score: 4,
      grade: { from: 'Strengthen', to: 'Optimize' },
      pillars: { structuralIntegrity: 2, failureResistance: 1, deviceHealth: 0, recoveryCapability: 9 },
      driver: 'recoveryCapability',
    },
  },
  {
    scoreDate: '2026-11-13',
    score: 74,
    grade: 'Strengthen',
    pillarScores: { structuralIntegrity: 79, failureResistance: 73, deviceHealth: 69, recoveryCapability: 76 },
    change: null,
  },
];
const certificate: z.input<typeof certificateSchema> = {
  certificateId: 'crt_5qXzK9mL2vT8pR4nW1cB7a',
  organization: { organizationId: ORGANIZATION_ID },
  recipient: { clientId: CLIENT_ID, type: 'insurance_provider', name: RECIPIENT_NAME },
  score: 78,
  grade: 'Optimize',
  pillarScores,
  scoreDate: SCORE_DATE,
  calculatedAt: CALCULATED_AT,
  asOf: '2026-11-21',
  issuedAt: NOW,
  eventIds: ['01JD2Q8W5ZK3M7X4P9R6T1V0BC'],
};
const keySet = {
  keys: [{ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: SIGNING_KID, alg: 'EdDSA', use: 'sig' }],
};

const authorization: z.input<typeof authorizationSchema> = {
  clientId: CLIENT_ID,
  organizationId: ORGANIZATION_ID,
  recipientType: 'insurance_provider',
  recipientName: RECIPIENT_NAME,
  scopes: ['qr_score', 'pillar_breakdown', 'score_trend'],
  status: 'active',
  createdAt: GRANTED_AT,
  expiresAt: EXPIRES_AT,
  allowedCidrs: ['203.0.113.0/24'],
  lastUsedAt: '2026-11-21T07:58:12.345Z',
  usage: { last24h: 42, last30d: 1180 },
  // Handed over in the create answer: no claim link, no recipient account.
  keyClaimed: true,
  claimedAt: null,
  claimedFromAddress: null,
  recipientAccountId: null,
  recipientAccountName: null,
  revokedAt: null,
  revocationReason: null,
};
const revoked = { ...authorization, status: 'revoked' as const, revokedAt: NOW, revocationReason: 'organization' as const };
const rotated = { ...authorization, apiKey: API_KEY, previousKeyExpiresAt: '2026-11-22T08:00:00.000Z' };
const claimLink = {
  url: 'https://console.example.com/claim/Zk4mQ9xW2pL7vN3cK8bT5zR1yF6gJ0sA2eU7iO4kW9n',
  expiresAt: '2026-11-24T08:00:00.000Z',
};
const claimLinkGrant = {
  ...authorization,
  createdAt: NOW,
  lastUsedAt: null,
  usage: { last24h: 0, last30d: 0 },
  keyClaimed: false,
  claim: claimLink,
};
const offered = {
  ...authorization,
  createdAt: NOW,
  status: 'pending' as const,
  lastUsedAt: null,
  usage: { last24h: 0, last30d: 0 },
  recipientAccountId: ACCOUNT_ID,
};
const portfolioCustomer = {
  clientId: CLIENT_ID,
  organizationId: ORGANIZATION_ID,
  recipientType: 'insurance_provider' as const,
  scopes: authorization.scopes,
  expiresAt: EXPIRES_AT,
};
const offer: z.input<typeof portfolioOfferSchema> = {
  ...portfolioCustomer,
  clientId: OTHER_CLIENT_ID,
  organizationId: OTHER_ORGANIZATION_ID,
  recipientName: RECIPIENT_NAME,
  allowedCidrs: null,
  offeredAt: NOW,
};

const person = { type: 'person' as const, id: 'dana.reyes@northwind.example', via: 'console' as const };
const accessLogEntry: z.input<typeof accessLogEntrySchema> = {
  at: '2026-11-21T07:58:12.345Z',
  resource: 'score',
  status: 200,
  code: null,
  clientAddress: '203.0.113.24',
  requestId: REQUEST_ID,
};
const accessLog = [
  accessLogEntry,
  {
    at: '2026-11-21T07:55:03.118Z',
    resource: 'certificate' as const,
    status: 200,
    code: null,
    clientAddress: '203.0.113.24',
    requestId: '0b6e2d4f-93a1-4c57-8e2b-1f7d6a9c3e55',
    certificate: { asOf: '2026-11-21', format: 'pdf' as const },
  },
  {
    ...accessLogEntry,
    at: '2026-11-20T22:14:40.002Z',
    status: 401,
    code: 'INVALID_API_KEY',
    clientAddress: '198.51.100.7',
    requestId: 'c41f',
  },
];
const auditLog: z.input<typeof auditLogEntrySchema>[] = [
  { at: GRANTED_AT, action: 'authorization.created', actor: person, requestId: REQUEST_ID, address: '192.0.2.10', clientId: CLIENT_ID },
  {
    at: '2026-10-01T12:00:00.000Z',
    action: 'authorization.key_rotated',
    actor: { type: 'service', id: 'ci-rotation', via: 'cli' },
    requestId: 'a9d0c7e1-5b2f-4e83-9d64-0c1b8e7f2a36',
    address: '192.0.2.44',
    clientId: CLIENT_ID,
  },
];
const alerts: z.input<typeof alertSchema>[] = [
  { id: 'alr_0Jq8WmZ3kT6vP1', type: 'authorization.new_address', at: NOW, clientId: CLIENT_ID, address: '203.0.113.24' },
  { id: 'alr_0Jq8WmZ3kT6vP2', type: 'authorization.expiring', at: NOW, clientId: OTHER_CLIENT_ID, expiresAt: '2026-12-01T00:00:00.000Z' },
];

const progress = { total: 2, decided: 1, kept: 1, revoked: 0, pending: 1 };
const reviewSummary = {
  reviewId: REVIEW_ID,
  organizationId: ORGANIZATION_ID,
  createdAt: NOW,
  createdBy: person,
  dueAt: DUE_AT,
  onOverdue: 'revoke' as const,
  status: 'open' as const,
  completedAt: null,
  progress,
};
const reviewItems: z.input<typeof accessReviewItemSchema>[] = [
  {
    clientId: CLIENT_ID,
    recipientType: 'insurance_provider',
    recipientName: RECIPIENT_NAME,
    scopes: authorization.scopes,
    decision: 'keep',
    note: 'Renewal of the policy in March',
    decidedAt: '2026-11-22T10:15:00.000Z',
    decidedBy: person,
    overdue: false,
  },
  {
    clientId: OTHER_CLIENT_ID,
    recipientType: 'auditor',
    recipientName: 'Tailspin Audit',
    scopes: ['qr_score'],
    decision: null,
    note: null,
    decidedAt: null,
    decidedBy: null,
    overdue: false,
  },
];
const review = { ...reviewSummary, items: reviewItems };
const reviewReport = {
  ...reviewSummary,
  period: { from: NOW, to: '2026-11-22T10:15:00.000Z' },
  issuedAt: '2026-11-22T10:15:00.000Z',
  items: reviewItems.map((item, index) => ({
    ...item,
    lastUsedAt: index === 0 ? authorization.lastUsedAt : null,
    readsInPeriod: index === 0 ? 42 : 0,
  })),
};

const conditions = { scoreBelow: 60 };
const webhook = {
  id: WEBHOOK_ID,
  url: 'https://hooks.contoso.example/resilience',
  events: ['score.updated' as const, 'grade.changed' as const],
  status: 'active' as const,
  disabledReason: null,
  conditions,
  createdAt: NOW,
};
const deliveries: z.input<typeof webhookDeliverySchema>[] = [
  {
    messageId: MESSAGE_ID,
    eventType: 'score.updated',
    attempt: 1,
    status: 'succeeded',
    responseCode: 204,
    failure: null,
    scheduledAt: '2026-11-20T06:00:01.000Z',
    attemptedAt: '2026-11-20T06:00:01.250Z',
  },
];
const event = <T extends string, D>(type: T, data: D) => ({ type, timestamp: '2026-11-20T06:00:01.000Z', data });

const scoreSubmission = {
  organizationId: ORGANIZATION_ID,
  scoreDate: SCORE_DATE,
  score: 78,
  grade: 'Optimize',
  pillarScores,
  calculatedAt: CALCULATED_AT,
};
const leakedKey = 'rsk_Mn5bV8cX2zL4kJ7hG1fD9sA3pO6iU0yT2rE5wQ8mN1bV4cX7zL';

/** One or more named examples of a body, as OpenAPI's `examples` holds them. */
export type ExampleSet = Record<string, { summary: string; value: unknown }>;
/** A set of one example, named by its summary in kebab case. */
const one = (summary: string, value: unknown): ExampleSet => ({
  [summary
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')]: { summary, value },
});

/** The example of every body schema a document names (by its component id). */
export const EXAMPLE_BODIES: Record<string, ExampleSet> = {
  // The read API
  Score: one('The latest score', score),
  PillarBreakdown: one('The pillars of the latest score', pillars),
  ScoreHistory: one('Two weekly scores, newest first', { clientId: CLIENT_ID, scores: history, nextCursor: null }),
  SignedCertificate: one('A certificate and its JWS', { certificate, jws: JWS }),
  JsonWebKeySet: one('The signing key in use', keySet),
  Portfolio: one('A recipient account', { accountId: ACCOUNT_ID, name: RECIPIENT_NAME, customers: 12 }),
  PortfolioCustomersPage: one('A page of grants', {
    items: [portfolioCustomer],
    nextCursor: 'eyJhZnRlciI6MX0',
    leftOut: { addressNotAllowed: 0 },
  }),
  PortfolioScoresPage: one('A page of scores', { items: [score], nextCursor: null, leftOut: { addressNotAllowed: 1 } }),
  PortfolioPillarsPage: one('A page of pillar breakdowns', { items: [pillars], nextCursor: null, leftOut: { addressNotAllowed: 0 } }),
  PortfolioCertificatesPage: one('A page of certificates', {
    items: [{ certificate, jws: JWS, clientId: CLIENT_ID }],
    nextCursor: null,
    leftOut: { addressNotAllowed: 0 },
  }),
  // The score ingest API
  ScoreSubmissionOrBatch: {
    one: { summary: 'One score', value: scoreSubmission },
    batch: {
      summary: 'A batch',
      value: { scores: [scoreSubmission, { ...scoreSubmission, organizationId: OTHER_ORGANIZATION_ID, score: 55, grade: 'Improve' }] },
    },
  },
  ScoresAccepted: one('Both scores of the batch are in the event log', { accepted: 2 }),
  // The credentials API
  CreateAuthorizationRequest: {
    key: {
      summary: 'A grant whose key is in the answer',
      value: {
        recipientType: 'insurance_provider',
        recipientName: RECIPIENT_NAME,
        scopes: authorization.scopes,
        expiresAt: '2027-08-31',
        allowedCidrs: authorization.allowedCidrs,
      },
    },
    claimLink: {
      summary: 'A grant whose key the recipient claims by a link',
      value: {
        recipientType: 'insurance_provider',
        recipientName: RECIPIENT_NAME,
        scopes: ['qr_score'],
        keyDelivery: 'claimLink',
        claimValidSeconds: 259200,
      },
    },
    account: {
      summary: "A grant offered to the recipient's account",
      value: { recipientType: 'insurance_provider', scopes: ['qr_score'], keyDelivery: 'account', recipientAccountId: ACCOUNT_ID },
    },
  },
  CreateAuthorizationResponse: {
    key: {
      summary: 'With its API key (shown only here)',
      value: { ...authorization, lastUsedAt: null, usage: { last24h: 0, last30d: 0 }, apiKey: API_KEY },
    },
    claimLink: { summary: 'With its one-time claim link', value: claimLinkGrant },
    account: { summary: 'Offered to a recipient account', value: offered },
  },
  Authorization: one('An active grant', authorization),
  AuthorizationList: one('Every grant of the organization', { authorizations: [authorization, revoked], nextCursor: null }),
  PendingRevocation: one('Revoked, its event owed to the event log', { ...revoked, enforcement: 'pending' }),
  RotateAuthorizationRequest: one('A day of overlap', { overlapSeconds: 86400 }),
  RotatedAuthorization: one('The new key, the previous one working for a day', rotated),
  PendingRotation: one('Rotated, its event owed to the event log', { ...rotated, enforcement: 'pending' }),
  AccessLogPage: one('Reads and refusals, newest first', { items: accessLog, nextCursor: 'eyJhdCI6IjIwMjYtMTEtMjAifQ' }),
  DailyReads: one('Reads per day', {
    days: [
      { day: '2026-11-20', reads: 38, refusals: 1 },
      { day: '2026-11-21', reads: 4, refusals: 0 },
    ],
  }),
  AlertList: one("The organization's recent alerts", { alerts }),
  AuditLogPage: one('Changes, newest first', { items: [...auditLog].reverse(), nextCursor: null }),
  IssueClaimLinkRequest: one('A link valid for three days', { claimValidSeconds: 259200 }),
  AuthorizationWithClaimLink: one('A new claim link', claimLinkGrant),
  ClaimGrant: one('What the link grants', {
    organizationId: ORGANIZATION_ID,
    clientId: CLIENT_ID,
    recipientName: RECIPIENT_NAME,
    recipientType: 'insurance_provider',
    scopes: authorization.scopes,
    expiresAt: EXPIRES_AT,
    claimExpiresAt: claimLink.expiresAt,
  }),
  ClaimRequest: {
    key: { summary: 'The key alone', value: { into: 'key' } },
    account: { summary: 'Into a new recipient account', value: { into: 'account', accountName: RECIPIENT_NAME } },
  },
  ClaimAnswer: {
    key: { summary: 'The API key (shown only here)', value: { clientId: CLIENT_ID, apiKey: API_KEY } },
    account: {
      summary: 'A new account and its key (shown only here)',
      value: { accountId: ACCOUNT_ID, accountKey: ACCOUNT_KEY, clientId: CLIENT_ID },
    },
    joined: { summary: 'Into the account whose key claimed it', value: { accountId: ACCOUNT_ID, clientId: CLIENT_ID } },
  },
  RotateAccountKeyRequest: one('An hour of overlap', { overlapSeconds: 3600 }),
  RotatedAccountKey: one('The new account key (shown only here)', {
    accountKey: ACCOUNT_KEY,
    previousKeyExpiresAt: '2026-11-21T09:00:00.000Z',
  }),
  PendingAccountKeyRotation: one('Rotated, its event owed to the event log', {
    accountKey: ACCOUNT_KEY,
    previousKeyExpiresAt: '2026-11-21T09:00:00.000Z',
    enforcement: 'pending',
  }),
  PendingRelease: one('Released, its event owed to the event log', { enforcement: 'pending' }),
  PortfolioOffersPage: one('Offers waiting for an answer', { items: [offer], nextCursor: null }),
  PortfolioCustomer: one('The grant, now in the portfolio', portfolioCustomer),
  PendingOfferAcceptance: one('Accepted, its event owed to the event log', { ...portfolioCustomer, enforcement: 'pending' }),
  PendingOfferDecline: one('Declined, its event owed to the event log', { enforcement: 'pending' }),
  AutoAccept: one("Accept Northwind Logistics' offers as they are made", { organizationIds: [ORGANIZATION_ID] }),
  SecretScanningReport: one("GitHub's report of one key", [
    { token: leakedKey, type: 'resilience_score_api_key', url: 'https://github.com/octo-org/octo-repo/blob/main/.env', source: 'content' },
  ]),
  SecretScanningLabels: one('The key was live and no longer works', [
    {
      token_hash: 'a3f1c0e9b87d6524f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8',
      token_type: 'resilience_score_api_key',
      label: 'true_positive',
    },
  ]),
  LeakedKeyReport: one('A key found in a paste', { key: leakedKey }),
  CreateAccessReviewRequest: one('Due in mid-December, undecided grants revoked', { dueAt: DUE_AT, onOverdue: 'revoke' }),
  AccessReviewSummary: one('An open review', reviewSummary),
  AccessReviewPage: one("The organization's reviews", { items: [reviewSummary], nextCursor: null }),
  AccessReview: one('An open review, one item decided', review),
  Offboarding: one('Pending: not every service has purged it yet', { status: 'pending', startedAt: NOW, doneAt: null }),
  Erasure: one("The grant's recipient erased", { subject: `grant:${CLIENT_ID}`, erasedAt: NOW }),
  AccessReviewItemDecisionRequest: one('Keep, with a note', { decision: 'keep', note: 'Renewal of the policy in March' }),
  SignedAccessReviewReport: one('The report and its JWS', { report: reviewReport, jws: JWS }),
  // The notifier
  CreateWebhookRequest: one('Scores and grade changes, when the score falls below 60', {
    url: webhook.url,
    events: webhook.events,
    conditions,
  }),
  CreatedWebhook: one('The webhook and its signing secret (shown only here)', { ...webhook, secret: WEBHOOK_SECRET }),
  WebhookList: one('The webhooks', { webhooks: [webhook] }),
  UpdateWebhookRequest: one('Paused', { enabled: false }),
  Webhook: one('The webhook', webhook),
  WebhookDeliveryList: one('Recent deliveries', { deliveries }),
  RotateWebhookSecretRequest: one('The previous secret signs for another hour', { overlapSeconds: 3600 }),
  RotatedWebhookSecret: one('The new secret (shown only here)', { secret: WEBHOOK_SECRET }),
  WebhookMessageAccepted: one('Queued for delivery', { messageId: MESSAGE_ID }),
  ScoreUpdatedWebhook: one('A new score', event('score.updated', { ...score, pillarScores })),
  GradeChangedWebhook: one(
    'A new grade',
    event('grade.changed', { clientId: CLIENT_ID, scoreDate: SCORE_DATE, from: 'Strengthen', to: 'Optimize' }),
  ),
  AuthorizationEndedWebhook: one('The grant ended', event('authorization.ended', { clientId: CLIENT_ID, reason: 'revoked', endedAt: NOW })),
  AuthorizationExpiringWebhook: one(
    'The grant expires soon',
    event('authorization.expiring', { clientId: CLIENT_ID, expiresAt: EXPIRES_AT }),
  ),
  AuthorizationFirstUseWebhook: one(
    'The key was used for the first time',
    event('authorization.first_use', { clientId: CLIENT_ID, address: '203.0.113.24' }),
  ),
  AuthorizationNewAddressWebhook: one(
    'The key was used from a new address',
    event('authorization.new_address', { clientId: CLIENT_ID, address: '198.51.100.7' }),
  ),
  AuthorizationAuthFailuresWebhook: one(
    'Failed authentications',
    event('authorization.auth_failures', { clientId: CLIENT_ID, address: '198.51.100.7', failures: 25 }),
  ),
  AuthorizationKeyLeakedWebhook: one(
    'The key was reported leaked',
    event('authorization.key_leaked', { clientId: CLIENT_ID, webhooksDisabled: 1 }),
  ),
  AuthorizationReleasedWebhook: one('The recipient released the grant', event('authorization.released', { clientId: CLIENT_ID })),
  AccessReviewDueSoonWebhook: one(
    'A review is due soon',
    event('access_review.due_soon', { reviewId: REVIEW_ID, dueAt: DUE_AT, pending: 1 }),
  ),
  AccessReviewCompletedWebhook: one(
    'A review completed',
    event('access_review.completed', { reviewId: REVIEW_ID, completedAt: DUE_AT, kept: 1, revoked: 1 }),
  ),
  WebhookTestWebhook: one('A test message', event('webhook.test', { webhookId: WEBHOOK_ID })),
  // The console
  ConsoleKeySet: one("The console's token key", {
    keys: [{ ...keySet.keys[0], kid: 'console-2026-11', x: 'VQ6d1CkQYv8u1Ql3sUeI5ZlO2c7n9FqXb0rT4wJmH3k' }],
  }),
};

/** What each error code's message says in the examples (the services' own messages, in substance). */
const ERROR_MESSAGES: Record<ErrorCode, string> = {
  MISSING_CLIENT_ID: 'The Client ID is missing from the path',
  INVALID_CLIENT_ID: 'The Client ID is not in the format the service issues',
  INVALID_ORGANIZATION_ID: 'The organization id must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"',
  INVALID_PARAMETER: 'limit must be a whole number from 1 to 100',
  MALFORMED_JSON: 'The body is not valid JSON',
  VALIDATION_FAILED: 'The request body is invalid',
  WEBHOOK_TARGET_NOT_ALLOWED: 'The webhook URL must be https and resolve to a public address',
  MISSING_API_KEY: 'The x-api-key header is missing',
  INVALID_API_KEY: 'The API key is not valid for this Client ID',
  CREDENTIAL_INACTIVE: 'The credential has been revoked or has expired',
  INVALID_TOKEN: 'The bearer token is missing, malformed, expired or not signed by a trusted key',
  INVALID_SIGNATURE: 'The signature does not verify',
  INSUFFICIENT_SCOPE: 'The credential lacks the scope this resource needs',
  FORBIDDEN_ORGANIZATION: 'The token administers another organization',
  ADDRESS_NOT_ALLOWED: "The client address is not on the credential's allow list",
  EDGE_BLOCKED: 'Blocked by the edge security policy',
  KEY_READ_ONLY: "This key reads; the account's key makes changes",
  CREDENTIAL_NOT_FOUND: 'No credential has this Client ID',
  SCORE_NOT_FOUND: 'No score has been calculated for this organization yet',
  PILLARS_NOT_FOUND: 'No pillar breakdown has been calculated for this organization yet',
  AUTHORIZATION_NOT_FOUND: 'This organization has no authorization with that Client ID',
  WEBHOOK_NOT_FOUND: 'There is no webhook with that id here',
  WEBHOOK_MESSAGE_NOT_FOUND: 'This webhook has no delivery with that message id',
  CLAIM_LINK_NOT_FOUND: 'No claim link has this token',
  RECIPIENT_ACCOUNT_NOT_FOUND: 'No recipient account has this id',
  OFFER_NOT_FOUND: 'This account has no offer with that Client ID',
  ACCESS_REVIEW_NOT_FOUND: 'This organization has no access review with that id',
  OFFBOARDING_NOT_CONFIRMED: 'confirm must repeat the organization id of the path',
  OFFBOARDING_NOT_FOUND: 'This organization has no offboarding on record',
  ACCESS_REVIEW_ITEM_NOT_FOUND: 'The grant is not an item of this review',
  ROUTE_NOT_FOUND: 'No such route',
  METHOD_NOT_ALLOWED: 'This path does not answer this method',
  AUTHORIZATION_INACTIVE: 'The authorization has been revoked or has expired',
  WEBHOOK_LIMIT_REACHED: 'The owner has as many webhooks as it may have',
  WEBHOOK_NOT_ACTIVE: 'The webhook is paused or disabled',
  KEY_ALREADY_CLAIMED: 'The key of this grant has been claimed already',
  KEY_NOT_CLAIMED: 'The key of this grant waits to be claimed by its link',
  KEY_HELD_BY_ACCOUNT: 'A recipient account holds this key',
  OFFER_NOT_PENDING: 'The offer no longer waits for an answer',
  ACCESS_REVIEW_COMPLETED: 'The review is completed',
  ACCESS_REVIEW_ITEM_DECIDED: 'The item is decided already',
  CLAIM_LINK_USED: 'The claim link has been used',
  CLAIM_LINK_EXPIRED: 'The claim link has expired',
  PAYLOAD_TOO_LARGE: 'The body is over the limit',
  UNSUPPORTED_MEDIA_TYPE: 'The body must be application/json',
  RATE_LIMITED: 'Rate limit exceeded',
  INTERNAL_ERROR: 'Internal error',
  SERVICE_UNAVAILABLE: 'The service cannot answer now; try again',
};

/** What a refusal without a code says, by status: the edge policy's 403, the 429, and the HTTP server's own. */
const CODELESS_MESSAGES: Record<string, string> = {
  '400': 'The request is not valid HTTP',
  '403': 'Blocked by the edge security policy',
  '408': 'The request was not received in time',
  '429': 'Rate limit exceeded; retry after the time Retry-After gives',
  '431': 'The request headers are too large',
};

/**
 * The error bodies a response's description names: one example per code it names for its status (a
 * VALIDATION_FAILED with its details), or one without a code when it names none (the edge policy's 403,
 * the 429, the HTTP server's refusals).
 */
export function errorExamples(status: string, description: string): ExampleSet {
  const now = new Date(NOW);
  const codes = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter(
    (code) => String(ERROR_STATUS[code]) === status && !CODES_NOT_SENT.has(code) && new RegExp(`\\b${code}\\b`).test(description),
  );
  if (codes.length === 0) {
    const message = CODELESS_MESSAGES[status] ?? 'The request was refused';
    return { refused: { summary: message, value: errorBody(Number(status), undefined, message, { requestId: REQUEST_ID, now }) } };
  }
  return Object.fromEntries(
    codes.map((code) => {
      const details = code === 'VALIDATION_FAILED' ? [{ path: 'scopes', message: 'must hold at least one scope' }] : undefined;
      const value = errorBody(Number(status), code, ERROR_MESSAGES[code], { requestId: REQUEST_ID, now, ...(details ? { details } : {}) });
      return [code, { summary: code, value }];
    }),
  );
}

/** The PDF a certificate is also answered as: its bytes, named here by their start. */
const PDF_EXAMPLE = one('A one-page PDF (its bytes begin so)', '%PDF-1.7\n%…');

/**
 * A text export's example (decision 54): the JSON example's entries (`items`, or a report's lines) as that
 * export writes them, CSV with the columns the description names (a nested field by its joined name:
 * `actorType` is `actor.type`) or one JSON object a line.
 */
function exportExample(mediaType: string, description: string, json: ExampleSet | undefined): ExampleSet | undefined {
  const value = json && (Object.values(json)[0]?.value as { items?: object[]; report?: { items: object[] } });
  const items = value?.items ?? value?.report?.items;
  if (!items) return undefined;
  if (mediaType === 'application/x-ndjson') return one('One entry a line', items.map((item) => `${JSON.stringify(item)}\n`).join(''));
  const columns = /header line \(([^)]*)\)/.exec(description)?.[1]?.split(', ');
  if (!columns) return undefined;
  return one(
    'With a header line',
    [csvLine(columns), ...items.map((item) => csvLine(columns.map((column) => csvValue(item, column))))].join(''),
  );
}

/** An entry's CSV cell: its field by the column's name, or a nested one by their joined names (`actorType`: `actor.type`). */
function csvValue(item: object, column: string): string | number | null {
  const fields = item as Record<string, unknown>;
  let found = fields[column];
  const parent = Object.keys(fields).find((key) => column.startsWith(key) && column !== key);
  const inner = parent === undefined ? undefined : fields[parent];
  if (found === undefined && parent !== undefined && typeof inner === 'object' && inner !== null) {
    const rest = column.slice(parent.length);
    found = (inner as Record<string, unknown>)[rest.charAt(0).toLowerCase() + rest.slice(1)];
  }
  if (Array.isArray(found)) return found.join(' ');
  if (typeof found === 'number' || typeof found === 'string') return found;
  return typeof found === 'boolean' ? String(found) : null;
}

interface MediaType {
  schema: { $ref?: string; description?: string };
  examples?: ExampleSet;
}
interface Operation {
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { description: string; content?: Record<string, MediaType> }>;
}

/** The example set of one media type of a body: by its component, an error's from its description, a text export's from its JSON. */
function examplesOf(mediaType: string, media: MediaType, description: string, status: string, json?: ExampleSet): ExampleSet | undefined {
  const id = media.schema.$ref?.replace('#/components/schemas/', '');
  if (id === 'Error') return errorExamples(status, description);
  if (id) return EXAMPLE_BODIES[id];
  if (mediaType === 'application/pdf') return PDF_EXAMPLE;
  if (mediaType === 'text/html') return one('The page', '<!doctype html>\n<html lang="en">…</html>');
  return exportExample(mediaType, media.schema.description ?? '', json);
}

/** Every operation and webhook of a document, by a name for messages (`get /customers/{clientId}/score`, `webhook score.updated`). */
export function operationsOf(document: object): [string, Operation][] {
  const { paths = {}, webhooks = {} } = document as {
    paths?: Record<string, Record<string, unknown>>;
    webhooks?: Record<string, { post: Operation }>;
  };
  return [
    ...Object.entries(paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => method !== 'servers')
        .map(([method, operation]): [string, Operation] => [`${method} ${path}`, operation as Operation]),
    ),
    ...Object.entries(webhooks).map(([name, item]): [string, Operation] => [`webhook ${name}`, item.post]),
  ];
}

/** The document with an example set in every media type of every request and response body it has an example for. */
export function withExamples<T extends object>(document: T): T {
  for (const [, operation] of operationsOf(document)) {
    for (const [mediaType, media] of Object.entries(operation.requestBody?.content ?? {})) {
      const examples = examplesOf(mediaType, media, '', '');
      if (examples) media.examples = examples;
    }
    for (const [status, response] of Object.entries(operation.responses)) {
      const content = response.content ?? {};
      const json = content['application/json'] && examplesOf('application/json', content['application/json'], response.description, status);
      for (const [mediaType, media] of Object.entries(content)) {
        const examples = mediaType === 'application/json' ? json : examplesOf(mediaType, media, response.description, status, json);
        if (examples) media.examples = examples;
      }
    }
  }
  return document;
}

/** Where a document has a request or response body without an example: `post /scores 202 application/json`. */
export function missingExamples(document: object): string[] {
  return operationsOf(document).flatMap(([name, operation]) => [
    ...Object.entries(operation.requestBody?.content ?? {})
      .filter(([, media]) => !media.examples || Object.keys(media.examples).length === 0)
      .map(([mediaType]) => `${name} request ${mediaType}`),
    ...Object.entries(operation.responses).flatMap(([status, response]) =>
      Object.entries(response.content ?? {})
        .filter(([, media]) => !media.examples || Object.keys(media.examples).length === 0)
        .map(([mediaType]) => `${name} ${status} ${mediaType}`),
    ),
  ]);
}
