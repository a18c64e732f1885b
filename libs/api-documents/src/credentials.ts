import {
  ACCESS_REVIEW_LIMIT,
  accessReviewItemDecisionRequestSchema,
  accessReviewPageSchema,
  accessReviewSchema,
  accessReviewSummarySchema,
  createAccessReviewRequestSchema,
  signedAccessReviewReportSchema,
  ACCESS_LOG_LIMIT,
  ACCESS_RESOURCES,
  accessLogPageSchema,
  alertListSchema,
  dailyReadsSchema,
  AUDIT_LOG_LIMIT,
  AUTHORIZATION_LIST_LIMIT,
  auditLogPageSchema,
  authorizationListSchema,
  authorizationSchema,
  authorizationWithClaimLinkSchema,
  ACCOUNT_KEY_OVERLAP_SECONDS,
  autoAcceptSchema,
  claimAnswerSchema,
  MAX_AUTO_ACCEPT_ORGANIZATIONS,
  PORTFOLIO_LIMIT,
  portfolioCustomerSchema,
  portfolioOffersPageSchema,
  claimGrantSchema,
  claimRequestSchema,
  rotateAccountKeyRequestSchema,
  rotatedAccountKeySchema,
  createAuthorizationResponseSchema,
  issueClaimLinkRequestSchema,
  createAuthorizationRequestSchema,
  rotateAuthorizationRequestSchema,
  rotatedAuthorizationSchema,
  leakedKeyReportSchema,
  SECRET_SCANNING_MAX_TOKENS,
  secretScanningLabelsSchema,
  secretScanningReportSchema,
  erasureSchema,
  offboardingSchema,
} from '@rsd/contracts';
import { z } from 'zod';
import {
  buildOpenApiDocument,
  errorResponse as error,
  operationParameter,
  pageParameters,
  textHeader as text,
  type OpenApiHeader,
  type OpenApiOperation,
  type OpenApiResponse,
} from '@rsd/platform';
import { withExamples } from './examples';
import { PRODUCT_VERSION } from './product';

const pathParameter = (name: string, schemaId: string, description: string) =>
  operationParameter('path', name, description, { $ref: `#/components/schemas/${schemaId}` });
const organizationIdParameter = pathParameter(
  'organizationId',
  'OrganizationId',
  "The organization the caller administers (the token's `org` claim)",
);
const clientIdParameter = pathParameter('clientId', 'ClientId', 'The Client ID exactly as issued');

/** Decision 29: `schema` with `enforcement: "pending"`, for a change recorded but whose event is not yet in the event log. */
const enforcementPending = (schema: z.ZodObject, id: string, description: string) =>
  schema.extend({ enforcement: z.literal('pending').meta({ description }) }).meta({ id });

const pendingRevocationSchema = enforcementPending(
  authorizationSchema,
  'PendingRevocation',
  'The revocation is recorded and will be published when the event log is back; until then a read-API replica may still accept the key, for at most its staleness bound',
);

/** Decision 29 applied to rotation: the new key is issued and recorded, but works only once its event is in the log. */
const pendingRotationSchema = enforcementPending(
  rotatedAuthorizationSchema,
  'PendingRotation',
  'The rotation is recorded and will be published when the event log is back; until then the new key is not yet accepted and the previous one still is',
);

const noStore = { 'Cache-Control': text('`no-store`: administrative data, and the create answer carries a secret') };
const ok = (description: string, schema: z.ZodType, headers: Record<string, OpenApiHeader> = {}): OpenApiResponse => ({
  description,
  schema,
  headers: { ...noStore, ...headers },
});
const callerErrors = {
  '400': error('INVALID_ORGANIZATION_ID (checked before the token), or VALIDATION_FAILED for a path that is not percent-encoded UTF-8'),
  '401': error('INVALID_TOKEN: the bearer token is missing, malformed, expired or not signed by a trusted key', {
    'WWW-Authenticate': text('`Bearer`'),
  }),
  '403': error('FORBIDDEN_ORGANIZATION (the token administers another organization) or INSUFFICIENT_SCOPE (no authorizations:write)'),
};
const tags = ['Authorizations'];

const queryParameter = (name: string, description: string, schema?: object) => operationParameter('query', name, description, schema);
const instantParameter = (name: string, description: string) =>
  queryParameter(name, `${description}; an ISO 8601 instant with an offset`, { type: 'string', format: 'date-time' });

/** Decision 54: what an export is, as both logs answer it. */
const exportsOf = (columns: string) => ({
  csv: `The whole filtered log (from \`cursor\` when given), newest first, streamed: RFC 4180 with a header line (${columns}), CRLF line ends; a cell starting with =, +, -, @, a tab or a carriage return is prefixed with a single quote so that no spreadsheet runs it`,
  ndjson: 'The whole filtered log (from `cursor` when given), newest first, streamed: one entry (as in `items`) per line',
});
/** Both logs' time range (decision 54). */
const entriesBetween = [
  instantParameter('from', 'Entries at or after this instant'),
  instantParameter('to', 'Entries before this instant (after `from`)'),
];
/** Both logs' answers: a page, or the whole filtered log exported with `columns`; and the caller's refusals. */
const logPage = (description: string, schema: Parameters<typeof ok>[1], columns: string) => ({
  '200': { ...ok(description, schema), exports: exportsOf(columns) },
  ...callerErrors,
});
const exportNote =
  ' With `Accept: text/csv` or `Accept: application/x-ndjson` the answer is the whole filtered log instead of a page, streamed at any size (`limit` is then ignored).';

const operations: OpenApiOperation[] = [
  {
    method: 'post',
    path: '/organizations/{organizationId}/authorizations',
    operationId: 'createAuthorization',
    summary: 'Create an authorization and issue its credential pair',
    description:
      'Issues a Client ID and an API key scoped to this organization. The API key is in this response only: ' +
      'the service keeps a one-way digest of it and can never show it again. An `expiresAt` date means ' +
      '"valid through the end of that UTC day" and is answered as the next day\'s 00:00:00.000Z, the first instant ' +
      'the credential no longer works; an `expiresAt` that is not in the future is refused (400), which the schema ' +
      'cannot say. The key works from the moment its creation reaches the read API: at once while the event log is ' +
      'up, otherwise once it is back (the 201 does not wait for it). With `"keyDelivery": "claimLink"` (decision 38) no key ' +
      'exists yet: the 201 carries `claim: { url, expiresAt }`, a link that works once for `claimValidSeconds` (default ' +
      '259200, 3600–604800), and every key is refused until the recipient claims it. With `"keyDelivery": "account"` and ' +
      '`recipientAccountId` the grant is offered to that recipient account (decisions 42 and 50): no key, no link, `status: "pending"`; ' +
      'nothing reads it, and no access log hears of it, until the account accepts it with its key (`POST /portfolio/offers/{clientId}/accept`), ' +
      'or at once when the account accepts this organization\'s offers automatically (`PUT /portfolio/auto-accept`; then `status: "active"`). ' +
      'The answer names the account only by the id given (`recipientAccountName` is null); once the account has accepted, the record shows its ' +
      'name. A declined offer is revoked with `revocationReason: "declined_by_recipient"`; a pending offer is revoked like any grant.',
    tags,
    security: 'bearer',
    parameters: [organizationIdParameter],
    requestBody: createAuthorizationRequestSchema,
    responses: {
      '201': ok(
        'Created: with the API key (only here); with `keyDelivery: "claimLink"` the one-time claim link instead (no key exists until the recipient claims it); with `keyDelivery: "account"` neither: offered to the account (`status` `pending`, or `active` when the account accepts this organization\'s offers automatically)',
        createAuthorizationResponseSchema,
        { Location: text('The new authorization') },
      ),
      ...callerErrors,
      '400': error(
        'INVALID_ORGANIZATION_ID, MALFORMED_JSON, or VALIDATION_FAILED with `details` naming every problem (an `expiresAt` not in the future, a path that is not percent-encoded UTF-8, included)',
      ),
      '404': error('RECIPIENT_ACCOUNT_NOT_FOUND: `keyDelivery: "account"` names no recipient account'),
      '413': error('PAYLOAD_TOO_LARGE: the body is over 16 kB'),
      '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
    },
  },
  {
    method: 'get',
    path: '/organizations/{organizationId}/authorizations',
    operationId: 'listAuthorizations',
    summary: "List the organization's authorizations, newest first",
    description:
      'Decision 54: filtered by `status`, `recipientType`, `scope` (grants carrying it), `expiresBefore` (grants with an expiry before ' +
      'the instant), `lastUsedBefore` (grants last used before the instant, or never) and `recipientAccountId`. With `limit` or ' +
      '`cursor` the answer is a page and `nextCursor` continues it; without either, every grant that matches comes in one answer ' +
      '(as before paging; `nextCursor` is then null). Pages are ordered by `createdAt` (newest first), then Client ID.',
    tags,
    security: 'bearer',
    parameters: [
      organizationIdParameter,
      queryParameter('status', 'Grants with this status', { $ref: '#/components/schemas/AuthorizationStatus' }),
      queryParameter('recipientType', 'Grants to this kind of recipient', { $ref: '#/components/schemas/RecipientType' }),
      queryParameter('scope', 'Grants carrying this scope', { $ref: '#/components/schemas/Scope' }),
      instantParameter('expiresBefore', 'Grants expiring before this instant'),
      instantParameter('lastUsedBefore', 'Grants last used before this instant, or never used'),
      queryParameter('recipientAccountId', 'Grants held by this recipient account', {
        $ref: '#/components/schemas/RecipientAccountId',
      }),
      ...pageParameters(AUTHORIZATION_LIST_LIMIT, 'Grants per page (no `limit` and no `cursor`: every match)'),
    ],
    responses: {
      '200': ok('The authorizations, without API keys', authorizationListSchema),
      ...callerErrors,
      '400': error(
        'INVALID_ORGANIZATION_ID (checked before the token), INVALID_PARAMETER: a bad or repeated filter, `limit` or `cursor`, or VALIDATION_FAILED: a path that is not percent-encoded UTF-8',
      ),
    },
  },
  {
    method: 'get',
    path: '/organizations/{organizationId}/authorizations/{clientId}',
    operationId: 'getAuthorization',
    summary: 'Read one authorization',
    tags,
    security: 'bearer',
    parameters: [organizationIdParameter, clientIdParameter],
    responses: {
      '200': ok('The authorization, without its API key', authorizationSchema),
      ...callerErrors,
      '404': error('AUTHORIZATION_NOT_FOUND: no such Client ID in this organization'),
    },
  },
  {
    method: 'post',
    path: '/organizations/{organizationId}/authorizations/{clientId}/revoke',
    operationId: 'revokeAuthorization',
    summary: 'Revoke an authorization',
    description:
      'Answers 200 once the revocation is in the event log, so every read-API replica refuses the key within a second. ' +
      'If the event log cannot take it in time, the revocation is still recorded and will be published: the answer is 202 ' +
      'with `"enforcement": "pending"` (decision 29). Revoking again is a no-op that answers the same record (and ' +
      'publishes the event if it is still owed); revoking an authorization that has already expired is a no-op that ' +
      'answers it with status `expired`.',
    tags,
    security: 'bearer',
    parameters: [organizationIdParameter, clientIdParameter],
    responses: {
      '200': ok('The authorization, now revoked (or as it was, if already inactive); enforced by every replica', authorizationSchema),
      '202': ok('Revoked and recorded, but not yet in the event log: enforcement is pending', pendingRevocationSchema),
      ...callerErrors,
      '404': error('AUTHORIZATION_NOT_FOUND: no such Client ID in this organization'),
      '503': error('SERVICE_UNAVAILABLE: the authorization kept changing concurrently; nothing was revoked, try again'),
    },
  },
  {
    method: 'post',
    path: '/organizations/{organizationId}/authorizations/{clientId}/rotate',
    operationId: 'rotateAuthorizationKey',
    summary: 'Issue a new API key, keeping the previous one valid for an overlap',
    description:
      'Decision 19: a new key for the same Client ID, scopes, expiry and rate-limit budget, shown only in this response. ' +
      'The previous key keeps working until `previousKeyExpiresAt` (now + `overlapSeconds`, default 86400, never later than ' +
      "the authorization's `expiresAt`; `null` when the overlap is 0); after it the previous key gets 401 INVALID_API_KEY. " +
      'Rotating again during an overlap ends the older key at once: at most two keys are valid. The body is optional.',
    tags,
    security: 'bearer',
    parameters: [organizationIdParameter, clientIdParameter],
    requestBody: rotateAuthorizationRequestSchema,
    requestBodyOptional: true,
    responses: {
      '200': ok('Rotated, with the new API key (only here); in effect on every read-API replica', rotatedAuthorizationSchema),
      '202': ok('Rotated and recorded, but not yet in the event log: the new key works once it is', pendingRotationSchema),
      ...callerErrors,
      '400': error(
        'INVALID_ORGANIZATION_ID, MALFORMED_JSON, or VALIDATION_FAILED (overlapSeconds not a whole number 0–604800, an unknown field, or a path that is not percent-encoded UTF-8)',
      ),
      '404': error('AUTHORIZATION_NOT_FOUND: no such Client ID in this organization'),
      '409': error(
        'AUTHORIZATION_INACTIVE: the authorization is revoked or expired; KEY_NOT_CLAIMED: its key waits to be claimed by its link; KEY_HELD_BY_ACCOUNT: a recipient account holds it (decision 42), or it is offered to one (decision 50), whose key the account rotates. No key is issued',
      ),
      '413': error('PAYLOAD_TOO_LARGE: the body is over 16 kB'),
      '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
      '503': error('SERVICE_UNAVAILABLE: the authorization kept changing concurrently; nothing was rotated, try again'),
    },
  },
  {
    method: 'get',
    path: '/organizations/{organizationId}/authorizations/{clientId}/access-log',
    operationId: 'listAccessLog',
    summary: "Who read through this authorization: the read API's access log, newest first",
    description:
      'Decision 21: every read-API request whose credential lookup found this authorization, successes and refusals ' +
      'alike (INVALID_API_KEY, CREDENTIAL_INACTIVE, ADDRESS_NOT_ALLOWED, 429 as `RATE_LIMITED`, INSUFFICIENT_SCOPE, ' +
      'SCORE_NOT_FOUND, 304 …), listed within 10 s of the request and kept for ACCESS_LOG_RETENTION_DAYS (90). No key, ' +
      'header or query string is ever recorded. Entries are ordered by `at`, then `requestId`, newest first; a ' +
      '`nextCursor` continues exactly where its page ended, even while new entries arrive. Decision 54: filtered by `from`, ' +
      '`to`, `status` and `address`; decision 55: by `resource` (`certificate`: the certificates fetched, each entry ' +
      'with the date and format asked for).' +
      exportNote,
    tags,
    security: 'bearer',
    parameters: [
      organizationIdParameter,
      clientIdParameter,
      ...entriesBetween,
      queryParameter('status', 'One status (`404`) or a class of them (`4xx`)', { type: 'string', pattern: '^[1-5]([0-9]{2}|xx)$' }),
      queryParameter('address', 'The client address exactly as the entries show it'),
      queryParameter('resource', 'One resource read', { type: 'string', enum: [...ACCESS_RESOURCES] }),
      ...pageParameters(ACCESS_LOG_LIMIT, 'Entries per page'),
    ],
    responses: {
      ...logPage('A page of the access log', accessLogPageSchema, 'at, resource, status, code, clientAddress, requestId'),
      '400': error(
        'INVALID_ORGANIZATION_ID (checked before the token), INVALID_PARAMETER: a bad or repeated `from`, `to` (or `from` not before `to`), `status`, `address`, `resource`, `limit` or `cursor`, or VALIDATION_FAILED: a path that is not percent-encoded UTF-8',
      ),
      '404': error('AUTHORIZATION_NOT_FOUND: no such Client ID in this organization'),
    },
  },
  {
    method: 'get',
    path: '/organizations/{organizationId}/authorizations/{clientId}/daily-reads',
    operationId: 'listDailyReads',
    summary: 'Reads and refused reads through this authorization on each of the last 30 UTC days',
    description:
      "Decision 38's chart, as the console draws it (decision 51): 30 entries, oldest first, today included, a day " +
      'without reads counted 0. A refusal is a read answered 4xx or 5xx; a claim of the key is not a read.',
    tags,
    security: 'bearer',
    parameters: [organizationIdParameter, clientIdParameter],
    responses: {
      '200': ok('One entry a day', dailyReadsSchema),
      ...callerErrors,
      '404': error('AUTHORIZATION_NOT_FOUND: no such Client ID in this organization'),
    },
  },
  {
    method: 'get',
    path: '/organizations/{organizationId}/alerts',
    operationId: 'listAlerts',
    summary: "The organization's last alerts, newest first",
    description:
      "Decision 44: what happened to the organization's grants (first use, a new address, failed authentications, an " +
      'expiry coming, a leaked key, a released grant), the last 100, newest first: the list the console shows (decision 51). ' +
      "The same events reach the organization's alert webhooks on the notifier. An alert's `address` is erased once it is older " +
      'than ALERT_ADDRESS_RETENTION_DAYS (90; decision 56); the alert stays.',
    tags,
    security: 'bearer',
    parameters: [organizationIdParameter],
    responses: {
      '200': ok('The last alerts', alertListSchema),
      ...callerErrors,
    },
  },
];

/** Decision 54's audit trail. */
export const auditLogOperation: OpenApiOperation = {
  method: 'get',
  path: '/organizations/{organizationId}/audit-log',
  operationId: 'listAuditLog',
  summary: "Who changed the organization's grants: the audit trail, newest first",
  description:
    "Decision 54: every change to the organization's grants (the recipients' answers to them included), with its actor (" +
    "`person` or `service` by the token's issuer and subject, `recipient` by its Client ID or " +
    'account id, `system` for the expiry scheduler, `reporter` for a leak report), how it was asked for (`via`), the request id and ' +
    "the caller's address. Kept with the events (the event log is the record) and listed once the change's event is in the log, " +
    'for AUDIT_RETENTION_DAYS (400; decision 56); ' +
    "the `webhook.*` and `alert_subscription.*` actions are reserved for the notifier's changes, which do not reach it yet. " +
    'A token with `authorizations:read` or `authorizations:write` reads it. Entries are ordered by `at`, newest first.' +
    exportNote,
  tags,
  security: 'bearer',
  parameters: [
    organizationIdParameter,
    ...entriesBetween,
    queryParameter('actor', "An actor's id exactly (`<issuer>|<subject>`, a Client ID, an account id), or an actor type"),
    queryParameter('action', 'One action', { $ref: '#/components/schemas/AuditAction' }),
    queryParameter('clientId', "One grant's entries", { $ref: '#/components/schemas/ClientId' }),
    ...pageParameters(AUDIT_LOG_LIMIT, 'Entries per page'),
  ],
  responses: {
    ...logPage('A page of the audit trail', auditLogPageSchema, 'at, action, actorType, actorId, actorVia, requestId, address, clientId'),
    '400': error(
      'INVALID_ORGANIZATION_ID (checked before the token), INVALID_PARAMETER: a bad or repeated `from`, `to` (or `from` not before `to`), `actor`, `action`, `clientId`, `limit` or `cursor`, or VALIDATION_FAILED: a path that is not percent-encoded UTF-8',
    ),
    '403': error(
      'FORBIDDEN_ORGANIZATION: the token does not administer this organization; INSUFFICIENT_SCOPE: it has neither authorizations:read nor authorizations:write',
    ),
  },
};
operations.push(auditLogOperation);

const claimTokenParameter = operationParameter('path', 'token', 'The token of the one-time claim link, exactly as in its URL');
const claimTags = ['Claim links'];
const secretNoStore = { 'Cache-Control': text('`no-store`') };
/** Decision 51: the page a person sees is the console's; a browser asking here is sent there. */
const toConsolePage = {
  '307': {
    description:
      "A browser's request (it prefers HTML, or posts a form): the console's page of the same link, path and query kept " +
      '(CONSOLE_PUBLIC_URL); only where the service knows a console',
    headers: { Location: text("The console's URL for this link") },
  },
};
const claimRefusals = {
  '404': { ...error('CLAIM_LINK_NOT_FOUND: no such link (mistyped, or replaced by a newer one)') },
  '410': {
    ...error(
      'CLAIM_LINK_USED: the link has been used; CLAIM_LINK_EXPIRED: the link has passed its `expiresAt`, or the authorization it grants was revoked or has expired',
    ),
  },
  '429': {
    ...error("Too many failed claim attempts from this address (shared with the read API's failed-authentication budget); no `code`", {
      'Retry-After': text('Seconds to wait'),
    }),
  },
};

operations.push(
  {
    method: 'post',
    path: '/organizations/{organizationId}/authorizations/{clientId}/claim-link',
    operationId: 'issueClaimLink',
    summary: 'Issue a new one-time claim link for an unclaimed authorization',
    description:
      'Decision 38: a new link (shown only in this response) for an authorization whose key waits to be claimed; the ' +
      'previous link stops working at once (it answers 404 CLAIM_LINK_NOT_FOUND). The link lasts `claimValidSeconds` ' +
      "(default 259200), never past the authorization's `expiresAt`. The body is optional.",
    tags,
    security: 'bearer',
    parameters: [organizationIdParameter, clientIdParameter],
    requestBody: issueClaimLinkRequestSchema,
    requestBodyOptional: true,
    responses: {
      '200': ok('The authorization, with its new claim link (only here)', authorizationWithClaimLinkSchema),
      ...callerErrors,
      '400': error(
        'INVALID_ORGANIZATION_ID, MALFORMED_JSON, or VALIDATION_FAILED (claimValidSeconds not a whole number 3600–604800, an unknown field, or a path that is not percent-encoded UTF-8)',
      ),
      '404': error('AUTHORIZATION_NOT_FOUND: no such Client ID in this organization'),
      '409': error(
        'KEY_ALREADY_CLAIMED: the key has been claimed (rotate it for a new one); AUTHORIZATION_INACTIVE: the authorization is revoked or expired; KEY_HELD_BY_ACCOUNT: the grant is offered to a recipient account (decision 50), whose key reads it once accepted',
      ),
      '413': error('PAYLOAD_TOO_LARGE: the body is over 16 kB'),
      '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
      '503': error('SERVICE_UNAVAILABLE: the authorization kept changing concurrently; nothing was issued, try again'),
    },
  },
  {
    method: 'get',
    path: '/claim/{token}',
    servers: [{ url: '/' }],
    operationId: 'describeClaim',
    summary: 'What a one-time claim link grants (consumes nothing)',
    description:
      'Decision 38: the organization, recipient, scopes and expiry the link grants, as JSON. A browser (one that prefers HTML) ' +
      "is redirected to the console's page of the link (decision 51). Opening the link uses nothing up: mail scanners open links. " +
      'Failed attempts count per client address like failed authentications.',
    tags: claimTags,
    security: 'public',
    parameters: [claimTokenParameter],
    responses: {
      '200': { description: 'What the link grants', schema: claimGrantSchema, headers: secretNoStore },
      ...toConsolePage,
      '400': error('VALIDATION_FAILED: the token is not percent-encoded UTF-8'),
      ...claimRefusals,
    },
  },
  {
    method: 'post',
    path: '/claim/{token}',
    servers: [{ url: '/' }],
    operationId: 'claimKey',
    summary: 'Claim the API key: it is created now and shown this once',
    description:
      'Decision 38: creates the key, stores only its digest and answers it once; the link is used up. A program sends ' +
      '`Content-Type: application/json` (a ClaimRequest, or none) or `Accept: application/json` and needs no cookie. With ' +
      '`{"into": "account"}` (decision 42) the grant goes into a recipient account instead of getting a key: with `x-api-key: <account key>` ' +
      'into that account (no key in the answer), without one into a new account (named `accountName`) whose key is answered once. The HTML ' +
      "form of the console's page posts to the console (decision 51), which calls this API; a form posted here is redirected there. " +
      'Until the key is claimed the read API and the notifier refuse every key with 401 INVALID_API_KEY; the claimed key ' +
      'works once its event reaches the read API (at once while the event log is up; while it is not, the answer carries ' +
      '`enforcement: "pending"`).',
    tags: claimTags,
    security: 'public',
    parameters: [
      claimTokenParameter,
      operationParameter('header', 'x-api-key', 'With `into: "account"`: the key of the recipient account the grant joins'),
    ],
    requestBody: claimRequestSchema,
    requestBodyOptional: true,
    responses: {
      '201': {
        description:
          'The Client ID and the new API key (shown only here); into a new account, its id and key (shown only here); into an existing account, its id',
        schema: claimAnswerSchema,
        headers: secretNoStore,
      },
      ...toConsolePage,
      '400': error(
        'MALFORMED_JSON: the body is not valid JSON, VALIDATION_FAILED: a JSON object that is not a ClaimRequest, or the token is not percent-encoded UTF-8',
      ),
      '401': error('INVALID_API_KEY: `into: "account"` with an x-api-key that is not a working recipient account key'),
      '403': error(
        'KEY_READ_ONLY: `into: "account"` with the previous account key of a rotation’s overlap, which only reads (decision 50)',
      ),
      '413': error('PAYLOAD_TOO_LARGE: the body is over 4 kB'),
      '415': error(
        'UNSUPPORTED_MEDIA_TYPE: a body that is not JSON (where no console is known to redirect a form to), a JSON body in another charset, or a Content-Encoding that is not supported',
      ),
      ...claimRefusals,
    },
  },
);

/** What an account key's reads answer when the key is refused. */
const accountKeyErrors = {
  '401': error('MISSING_API_KEY, or INVALID_API_KEY: not a recipient account key that works now'),
  '429': error("Too many failed authentications from this address (shared with the read API's budget); no `code`", {
    'Retry-After': text('Seconds to wait'),
  }),
};
/** What a change by an account key answers besides: only the current key manages. */
const managingKeyErrors = {
  ...accountKeyErrors,
  '403': error(
    'KEY_READ_ONLY: the previous account key of a rotation’s overlap, which only reads until the overlap ends (decision 50); use the current key',
  ),
};

operations.push(
  {
    method: 'post',
    path: '/portfolio/keys/rotate',
    operationId: 'rotateAccountKey',
    summary: "Rotate the recipient account's key",
    description:
      'Decision 42: a new account key, shown only in this answer; the previous one keeps working for `overlapSeconds` ' +
      `(${ACCOUNT_KEY_OVERLAP_SECONDS.min}–${ACCOUNT_KEY_OVERLAP_SECONDS.max}, default ${ACCOUNT_KEY_OVERLAP_SECONDS.default}), a key kept by an ` +
      'earlier rotation stops at once. 202 with `enforcement: "pending"` while the event log is away: the new key works once it is back. ' +
      'The body is optional.',
    tags: ['Portfolio'],
    security: 'apiKey',
    requestBody: rotateAccountKeyRequestSchema,
    requestBodyOptional: true,
    responses: {
      '201': { description: 'The new account key (only here)', schema: rotatedAccountKeySchema, headers: secretNoStore },
      '202': {
        description: 'Recorded; the new key works once its event reaches the event log',
        schema: rotatedAccountKeySchema.extend({ enforcement: z.literal('pending') }).meta({ id: 'PendingAccountKeyRotation' }),
        headers: secretNoStore,
      },
      '400': error('MALFORMED_JSON, or VALIDATION_FAILED (overlapSeconds out of range, or an unknown field)'),
      ...managingKeyErrors,
      '413': error('PAYLOAD_TOO_LARGE: the body is over 4 kB'),
      '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
      '503': error('SERVICE_UNAVAILABLE: the account kept changing concurrently; nothing was issued, try again'),
    },
  },
  {
    method: 'delete',
    path: '/portfolio/customers/{clientId}',
    operationId: 'releaseGrant',
    summary: 'Leave a grant the account holds',
    description:
      'Decision 42: ends the grant as a revocation does (`revocationReason: "released_by_recipient"`, which its organization sees). ' +
      'Idempotent: a grant that has ended already answers the same. 202 with `enforcement: "pending"` while the event log is away.',
    tags: ['Portfolio'],
    security: 'apiKey',
    parameters: [clientIdParameter],
    responses: {
      '204': { description: "Released: the grant has ended and the read API refuses it within decision 29's bound" },
      '202': {
        description: 'Recorded; enforced once its event reaches the event log',
        schema: z.object({ enforcement: z.literal('pending') }).meta({ id: 'PendingRelease' }),
      },
      ...managingKeyErrors,
      '404': error('AUTHORIZATION_NOT_FOUND: the account holds no such grant'),
      '503': error('SERVICE_UNAVAILABLE: the grant kept changing concurrently; nothing changed, try again'),
    },
  },
);

const offerClientIdParameter = pathParameter('clientId', 'ClientId', 'The Client ID of the offer, as `GET /portfolio/offers` lists it');
const offerRefusals = {
  '400': error('VALIDATION_FAILED: a path that is not percent-encoded UTF-8'),
  ...managingKeyErrors,
  '404': error(
    'OFFER_NOT_FOUND: no grant with this Client ID was offered to this account (whether it exists or not, or cannot be a Client ID: the answer is the same)',
  ),
};
const offerTags = ['Portfolio offers'];

operations.push(
  {
    method: 'get',
    path: '/portfolio/offers',
    operationId: 'listPortfolioOffers',
    summary: 'The grants offered to the account that wait for its answer',
    description:
      'Decision 50: every grant an organization offered to this account (`keyDelivery: "account"`) that the account has neither accepted ' +
      'nor declined, and that has not been revoked or expired, in a stable order (Client ID, descending) and paged as the portfolio is. ' +
      'Until it is accepted, an offer is not readable by any key, is in no portfolio page or count, and is in no access log.',
    tags: offerTags,
    security: 'apiKey',
    parameters: pageParameters(PORTFOLIO_LIMIT, 'Offers per page'),
    responses: {
      '200': ok(
        'A page of offers; a page may hold fewer than `limit` (an offer expiring meanwhile is left out)',
        portfolioOffersPageSchema,
      ),
      '400': error('INVALID_PARAMETER: a bad or repeated `limit` or `cursor`'),
      ...accountKeyErrors,
    },
  },
  {
    method: 'post',
    path: '/portfolio/offers/{clientId}/accept',
    operationId: 'acceptPortfolioOffer',
    summary: 'Accept an offer: the account holds the grant from now on',
    description:
      "Decision 50: the grant joins the account as a claim into it does (decision 42): the account key reads it, and its organization's record " +
      'shows the account\'s name. Accepting an offer the account has accepted already answers the same. 202 with `enforcement: "pending"` ' +
      'while the event log is away: the account key reads the grant once the event is in it.',
    tags: offerTags,
    security: 'apiKey',
    parameters: [offerClientIdParameter],
    responses: {
      '200': ok('Accepted: the grant as the portfolio lists it; in effect on every read-API replica', portfolioCustomerSchema),
      '202': ok(
        'Accepted and recorded, but not yet in the event log: the account key reads the grant once it is',
        portfolioCustomerSchema.extend({ enforcement: z.literal('pending') }).meta({ id: 'PendingOfferAcceptance' }),
      ),
      ...offerRefusals,
      '409': error(
        'OFFER_NOT_PENDING: the offer no longer waits for an answer: it was declined, revoked by its organization, or has expired. Nothing changes',
      ),
      '503': error('SERVICE_UNAVAILABLE: the grant kept changing concurrently; nothing changed, try again'),
    },
  },
  {
    method: 'post',
    path: '/portfolio/offers/{clientId}/decline',
    operationId: 'declinePortfolioOffer',
    summary: 'Decline an offer: the grant ends, and its organization sees that the account declined it',
    description:
      'Decision 50: the grant is revoked with `revocationReason: "declined_by_recipient"` (its `AuthorizationRevoked` event as for any revocation). ' +
      'Declining an offer the account has declined already answers the same. 202 with `enforcement: "pending"` while the event log is away.',
    tags: offerTags,
    security: 'apiKey',
    parameters: [offerClientIdParameter],
    responses: {
      '204': { description: 'Declined: the grant has ended', headers: noStore },
      '202': ok(
        'Declined and recorded; in effect once its event reaches the event log',
        z.object({ enforcement: z.literal('pending') }).meta({ id: 'PendingOfferDecline' }),
      ),
      ...offerRefusals,
      '409': error(
        'OFFER_NOT_PENDING: the offer no longer waits for an answer: the account accepted it (leave it with `DELETE /portfolio/customers/{clientId}`), or it was revoked or has expired. Nothing changes',
      ),
      '503': error('SERVICE_UNAVAILABLE: the grant kept changing concurrently; nothing changed, try again'),
    },
  },
  {
    method: 'get',
    path: '/portfolio/auto-accept',
    operationId: 'getPortfolioAutoAccept',
    summary: 'The organizations whose offers the account accepts as they are made',
    tags: offerTags,
    security: 'apiKey',
    responses: { '200': ok('The list; [] for none', autoAcceptSchema), ...accountKeyErrors },
  },
  {
    method: 'put',
    path: '/portfolio/auto-accept',
    operationId: 'setPortfolioAutoAccept',
    summary: 'Name the organizations whose offers the account accepts as they are made',
    description:
      `Decision 50: replaces the list (at most ${MAX_AUTO_ACCEPT_ORGANIZATIONS} organization ids, none repeated; [] for none). An offer from a ` +
      "listed organization is in the portfolio from its creation; its organization's create answer still names no account. Offers made before " +
      'an organization was listed keep waiting for an answer.',
    tags: offerTags,
    security: 'apiKey',
    requestBody: autoAcceptSchema,
    responses: {
      '200': ok('The list now in force', autoAcceptSchema),
      '400': error(
        `MALFORMED_JSON, or VALIDATION_FAILED with \`details\`: not \`{ "organizationIds": [...] }\`, more than ${MAX_AUTO_ACCEPT_ORGANIZATIONS} ids, an id not 1–64 characters of A-Z, a-z, 0-9, "_" or "-", or one repeated`,
      ),
      ...managingKeyErrors,
      '413': error('PAYLOAD_TOO_LARGE: the body is over 96 kB'),
      '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
      '503': error('SERVICE_UNAVAILABLE: the account kept changing concurrently; nothing changed, try again'),
    },
  },
);

const leakTags = ['Leaked keys'];
const leakHeaders = { 'Cache-Control': text('`no-store`') };
const signatureHeader = (name: string, description: string) => operationParameter('header', name, description, undefined, true);

operations.push(
  {
    method: 'post',
    path: '/secret-scanning/github',
    operationId: 'reportSecretScanningTokens',
    summary: "GitHub's secret-scanning partner report: the leaked keys in it stop working",
    description:
      'Decision 43. GitHub posts the tokens matching our regular expressions (docs/leaked-keys.md) that it found in public ' +
      'repositories, signed with ECDSA P-256 over the raw body; the keys are those listed at `SECRET_SCANNING_KEYS_URL` ' +
      "(GitHub's `meta/public_keys/secret_scanning`), fetched again once on an unknown identifier (at most once a minute). " +
      'Every token that is a well-formed key of this product and matches a live key ends it at once: the current key of a ' +
      'grant revokes the grant (`revocationReason: "key_leaked"`), the previous key of a rotation overlap or an account key ends ' +
      'alone. The answer labels each token, in order; the same report again changes nothing and is labelled the same. A report ' +
      'that is not signed by a listed key, or is not such an array, changes nothing. No token is stored, logged or echoed.',
    tags: leakTags,
    security: 'public',
    parameters: [
      signatureHeader('Github-Public-Key-Identifier', 'The identifier of the key that signed the report, as the key list names it'),
      signatureHeader('Github-Public-Key-Signature', 'The ECDSA P-256 signature with SHA-256 of the raw body, DER-encoded, in base64'),
    ],
    requestBody: secretScanningReportSchema,
    responses: {
      '200': {
        description:
          "Every live key reported no longer works, and its change is in the event log: the read API refuses it within decision 29's bound",
        schema: secretScanningLabelsSchema,
        headers: leakHeaders,
      },
      '202': {
        description:
          'The same labels; the changes are recorded, and published when the event log is back (until then a read-API replica may accept a reported key for at most its staleness bound)',
        schema: secretScanningLabelsSchema,
        headers: leakHeaders,
      },
      '400': error(
        `MALFORMED_JSON: the signed body is not JSON in UTF-8; VALIDATION_FAILED: it is not an array of objects with a string \`token\` and \`type\` (nothing changes)`,
      ),
      '401': error(
        'INVALID_SIGNATURE: a signature header is missing, the identifier is not a key the list names (even fetched again), or the signature does not verify; nothing changes',
      ),
      '413': error(`PAYLOAD_TOO_LARGE: the body is over 1 MB, or the report carries more than ${SECRET_SCANNING_MAX_TOKENS} tokens`),
      '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
      '503': error(
        'SERVICE_UNAVAILABLE: the key list could not be fetched (so the signature cannot be checked), or a record kept changing concurrently; GitHub tries again',
      ),
    },
  },
  {
    method: 'post',
    path: '/leaked-keys',
    operationId: 'reportLeakedKey',
    summary: 'Report a key found anywhere: if it is a live key, it stops working',
    description:
      'Decision 43, for a key found elsewhere than by GitHub (a paste site, a log, an e-mail). It does what a secret-scanning report ' +
      'does to the key and always answers 202 with no body, whether or not the key exists, so it tells nothing about which keys do. ' +
      "Every request counts against the address's failed-authentication budget (`FAILED_AUTH_LIMIT_PER_MINUTE`, shared with the read API).",
    tags: leakTags,
    security: 'public',
    requestBody: leakedKeyReportSchema,
    responses: {
      '202': {
        description: 'Received: if the key was live it no longer works (once its change is in the event log)',
        headers: leakHeaders,
      },
      '400': error('MALFORMED_JSON, or VALIDATION_FAILED: the body is not `{ "key": "…" }` (1–1024 characters, no other field)'),
      '413': error('PAYLOAD_TOO_LARGE: the body is over 16 kB (room for the longest key the schema allows, however it is escaped)'),
      '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
      '429': error("Too many requests from this address (the read API's failed-authentication budget); no `code`", {
        'Retry-After': text('Seconds to wait'),
      }),
      '503': error('SERVICE_UNAVAILABLE: a record kept changing concurrently; try again'),
    },
  },
);

// ---- Access reviews (decision 54): begin ----------------------------------------------------------

const reviewIdParameter = pathParameter('reviewId', 'AccessReviewId', 'The review id as created (`arv_…`)');
const reviewPath = '/organizations/{organizationId}/access-reviews';
const reviewScopes = 'A token with `authorizations:read` or `authorizations:write` reads it.';
const readerRefusal = error(
  'FORBIDDEN_ORGANIZATION: the token administers another organization; INSUFFICIENT_SCOPE: it has neither authorizations:read nor authorizations:write',
);
const reviewNotFound = error("ACCESS_REVIEW_NOT_FOUND: no such review in this organization (another organization's answers the same)");
const reviewTags = ['Access reviews'];

operations.push(
  {
    method: 'post',
    path: reviewPath,
    operationId: 'createAccessReview',
    summary: 'Begin an access review of every active grant',
    description:
      'Decision 54 (evidence for SOC 2 CC6.2–6.3): every grant active now becomes an item (as it stands now: recipient and scopes). ' +
      'A reviewer keeps or revokes each; at `dueAt` the items still undecided are kept or revoked as `onOverdue` says, by the system, ' +
      "within the service's check interval (5 s by default), and the review completes. Its creation, each decision and its completion " +
      "are in the audit trail (`access_review.created`, `access_review.item_decided`, `access_review.completed`). The organization's alerts " +
      '`access_review.due_soon` (3 days before `dueAt`, or at once when it is nearer) and `access_review.completed` are events of the log.',
    tags: reviewTags,
    security: 'bearer',
    parameters: [organizationIdParameter],
    requestBody: createAccessReviewRequestSchema,
    responses: {
      '201': ok('The review, open, with its progress', accessReviewSummarySchema, { Location: text("The review's URL") }),
      ...callerErrors,
      '400': error(
        'INVALID_ORGANIZATION_ID (checked before the token), MALFORMED_JSON, or VALIDATION_FAILED: `dueAt` missing, not an instant with an offset, or not in the future; `onOverdue` not `keep` or `revoke`; another field',
      ),
      '413': error('PAYLOAD_TOO_LARGE: the body is over 16 kB'),
      '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
      '503': error('SERVICE_UNAVAILABLE: the store is unreachable; try again'),
    },
  },
  {
    method: 'get',
    path: reviewPath,
    operationId: 'listAccessReviews',
    summary: "The organization's access reviews, newest first",
    description: `Decision 54: each review with its progress, newest first, a page at a time. ${reviewScopes}`,
    tags: reviewTags,
    security: 'bearer',
    parameters: [organizationIdParameter, ...pageParameters(ACCESS_REVIEW_LIMIT, 'Reviews per page')],
    responses: {
      '200': ok('A page of reviews', accessReviewPageSchema),
      ...callerErrors,
      '400': error('INVALID_ORGANIZATION_ID (checked before the token), or INVALID_PARAMETER: a bad or repeated `limit` or `cursor`'),
      '403': readerRefusal,
    },
  },
  {
    method: 'get',
    path: `${reviewPath}/{reviewId}`,
    operationId: 'getAccessReview',
    summary: 'An access review: its progress and every item',
    description: `Decision 54: the review, its progress and each item (what was decided, by whom, when, and whether at the due time). ${reviewScopes}`,
    tags: reviewTags,
    security: 'bearer',
    parameters: [organizationIdParameter, reviewIdParameter],
    responses: { '200': ok('The review', accessReviewSchema), ...callerErrors, '403': readerRefusal, '404': reviewNotFound },
  },
  {
    method: 'put',
    path: `${reviewPath}/{reviewId}/items/{clientId}`,
    operationId: 'decideAccessReviewItem',
    summary: 'Keep or revoke one grant of a review',
    description:
      "Decision 54: the reviewer's decision, with an optional note; it stands (a second decision is refused). `revoke` revokes the grant " +
      'as a revocation does (`revocationReason: "access_review"`, its event, webhooks and audit entry, the reviewer its actor). The last ' +
      'item decided completes the review.',
    tags: reviewTags,
    security: 'bearer',
    parameters: [organizationIdParameter, reviewIdParameter, clientIdParameter],
    requestBody: accessReviewItemDecisionRequestSchema,
    responses: {
      '200': ok('The review after the decision', accessReviewSchema),
      ...callerErrors,
      '400': error(
        'INVALID_ORGANIZATION_ID (checked before the token), MALFORMED_JSON, or VALIDATION_FAILED: `decision` not `keep` or `revoke`, a `note` over 1000 characters, another field',
      ),
      '404': error(
        'ACCESS_REVIEW_NOT_FOUND: no such review in this organization; ACCESS_REVIEW_ITEM_NOT_FOUND: the grant is no item of it',
      ),
      '409': error(
        'ACCESS_REVIEW_ITEM_DECIDED: the item is decided already; ACCESS_REVIEW_COMPLETED: the review is completed. Nothing changes',
      ),
      '413': error('PAYLOAD_TOO_LARGE: the body is over 16 kB'),
      '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
      '503': error('SERVICE_UNAVAILABLE: the review kept changing concurrently (other decisions); try again'),
    },
  },
  {
    method: 'get',
    path: `${reviewPath}/{reviewId}/report`,
    operationId: 'getAccessReviewReport',
    summary: "An access review's report, signed",
    description:
      "Decision 54: each grant with its last successful read, its reads in the review's period (from its start to its completion, or to " +
      'now while open; counted by the hour, as the usage counters keep them), its decision, who made it and when. JSON answers ' +
      "`{ report, jws }`: the report as a compact JWS (EdDSA) signed with the read API's response-signing keys, as certificates are; " +
      '`rsd verify FILE` checks it against the published keys, or offline against a saved key set. ' +
      `\`Accept: text/csv\` answers the report's lines as CSV instead. ${reviewScopes}`,
    tags: reviewTags,
    security: 'bearer',
    parameters: [organizationIdParameter, reviewIdParameter],
    responses: {
      '200': {
        ...ok('The signed report', signedAccessReviewReportSchema),
        exports: {
          csv: 'RFC 4180 with a header line (clientId, recipientType, recipientName, scopes, lastUsedAt, readsInPeriod, decision, overdue, note, decidedAt, decidedByType, decidedById, decidedByVia), CRLF line ends; a cell starting with =, +, -, @, a tab or a carriage return is prefixed with a single quote so that no spreadsheet runs it',
        },
      },
      ...callerErrors,
      '403': readerRefusal,
      '404': reviewNotFound,
    },
  },
);

// ---- Access reviews (decision 54): end ------------------------------------------------------------

// ---- Offboarding and erasure (decision 56) ---------------------------------------------------------

const erasureTags = ['Offboarding and erasure'];
const offboardingRefusals = {
  ...callerErrors,
  '403': error('FORBIDDEN_ORGANIZATION (the token administers another organization) or INSUFFICIENT_SCOPE (no organizations:delete)'),
};
const offboardingHeaders = { 'Cache-Control': text('`no-store`') };
const erasureAnswer = {
  description:
    "Erased: the recipient's key is destroyed and its name and addresses are gone from this service's stores; the other services' views drop them as they read the `recipient.erased` event that follows",
  schema: erasureSchema,
  headers: offboardingHeaders,
};

operations.push(
  {
    method: 'delete',
    path: '/organizations/{organizationId}',
    operationId: 'offboardOrganization',
    summary: 'Offboard the organization: revoke every grant and erase its data',
    description:
      'Decision 56: revokes every grant (`revocationReason: "organization_offboarded"`, each with its event, webhooks and audit entry), ' +
      "destroys the organization's key (every event of it in the log, and in any backup, becomes unreadable), then every service purges " +
      'what it keeps of the organization: views, access log, audit trail, webhooks and alert subscriptions. Final: nothing is undone, and the ' +
      'organization id must be repeated as `confirm`. Asked again while pending it takes every step again (each is idempotent); once done, it ' +
      'answers the record. `GET /organizations/{organizationId}/offboarding` says when every service has purged.',
    tags: erasureTags,
    security: 'bearer',
    parameters: [
      organizationIdParameter,
      { ...queryParameter('confirm', 'The organization id again, exactly as in the path'), required: true },
    ],
    responses: {
      '202': {
        description: 'Started (or still pending, or done): the offboarding as `GET …/offboarding` answers it',
        schema: offboardingSchema,
        headers: { ...offboardingHeaders, Location: text('`/v1/organizations/{organizationId}/offboarding`') },
      },
      ...offboardingRefusals,
      '400': error(
        'OFFBOARDING_NOT_CONFIRMED: `confirm` is missing or is not the organization id of the path; or INVALID_ORGANIZATION_ID (checked before the token)',
      ),
      '503': error('SERVICE_UNAVAILABLE: the event log or a store is away; what was done stays done, ask again'),
    },
  },
  {
    method: 'get',
    path: '/organizations/{organizationId}/offboarding',
    operationId: 'getOffboarding',
    summary: "The organization's offboarding",
    description:
      'Decision 56: `pending` until the credentials service, the read API and the notifier have each purged the organization, then `done` ' +
      'with the instant the last one did. The record is kept 30 days after it is done.',
    tags: erasureTags,
    security: 'bearer',
    parameters: [organizationIdParameter],
    responses: {
      '200': { description: 'The offboarding', schema: offboardingSchema, headers: offboardingHeaders },
      ...offboardingRefusals,
      '404': error('OFFBOARDING_NOT_FOUND: the organization was never offboarded, or its offboarding was done more than 30 days ago'),
    },
  },
  {
    method: 'post',
    path: '/organizations/{organizationId}/authorizations/{clientId}/erasure',
    operationId: 'eraseRecipient',
    summary: "Erase a grant's recipient",
    description:
      "Decision 56: destroys the grant's own key (`grant:<clientId>`, whoever holds the grant), and erases the recipient's name, " +
      'contact fields and every address seen for it on this grant (access log, audit entries, alerts) from every store. An account ' +
      'holding the grant keeps its key, its name and its other grants. The grant, its scopes, keys and history otherwise stay; it is not revoked.',
    tags: erasureTags,
    security: 'bearer',
    parameters: [organizationIdParameter, clientIdParameter],
    responses: {
      '202': erasureAnswer,
      ...callerErrors,
      '404': error('AUTHORIZATION_NOT_FOUND: no such authorization in this organization'),
      '503': error('SERVICE_UNAVAILABLE: the event log or a store is away; ask again'),
    },
  },
  {
    method: 'post',
    path: '/portfolio/erasure',
    operationId: 'eraseAccount',
    summary: "Erase the recipient account's own data",
    description:
      "Decision 56: destroys the account's key and each held grant's own, and erases its name, and on every grant it holds its addresses " +
      '(access log, audit entries, alerts) and the name the grant knew it by. The grants and their history otherwise stay, and the account keeps working.',
    tags: ['Portfolio'],
    security: 'apiKey',
    responses: {
      '202': erasureAnswer,
      ...managingKeyErrors,
      '503': error('SERVICE_UNAVAILABLE: the event log or a store is away; ask again'),
    },
  },
);

// ---- Offboarding and erasure (decision 56): end ----------------------------------------------------

export function credentialsOpenApi(): object {
  return withExamples(
    buildOpenApiDocument(
      {
        title: 'Resilience Score Credentials API',
        version: PRODUCT_VERSION,
        description:
          'Lets an organization share its resilience score: it creates one authorization per recipient, ' +
          'each with its own Client ID and API key, and may revoke it at any time. Callers authenticate with ' +
          'a bearer JWT whose `org` claim names the organization and whose `scope` includes `authorizations:write`.',
      },
      operations,
    ),
  );
}
