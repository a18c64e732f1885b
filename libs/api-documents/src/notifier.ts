import {
  authorizationAuthFailuresPayloadSchema,
  authorizationEndedPayloadSchema,
  authorizationExpiringPayloadSchema,
  authorizationFirstUsePayloadSchema,
  authorizationKeyLeakedPayloadSchema,
  authorizationNewAddressPayloadSchema,
  authorizationReleasedPayloadSchema,
  accessReviewCompletedPayloadSchema,
  accessReviewDueSoonPayloadSchema,
  createdWebhookSchema,
  createWebhookRequestSchema,
  gradeChangedPayloadSchema,
  rotatedWebhookSecretSchema,
  rotateWebhookSecretRequestSchema,
  scoreUpdatedPayloadSchema,
  updateWebhookRequestSchema,
  webhookDeliveryListSchema,
  webhookListSchema,
  webhookMessageAcceptedSchema,
  webhookSchema,
  webhookTestPayloadSchema,
} from '@rsd/contracts';
import {
  buildOpenApiDocument,
  errorResponse as error,
  operationParameter,
  type OpenApiOperation,
  type OpenApiResponse,
  type OpenApiWebhook,
} from '@rsd/platform';
import { withExamples } from './examples';
import { PRODUCT_VERSION } from './product';
/**
 * What the document says of one kind of webhook owner (decision 45): the part of the notifier's owner declaration
 * (webhook-owners.ts there) that its operations are documented from.
 */
export interface WebhookOwnerDocumentation {
  /** The path under `/v1` before `/webhooks`, with `:name` for each path parameter: `/customers/:clientId`. */
  path: string;
  /** At most this many webhooks per owner. */
  limit: number;
  /** The owner in messages: "This authorization has no webhook with that id". */
  noun: string;
  docs: {
    /** Inserted into operation ids: '' gives `createWebhook`, 'Portfolio' gives `createPortfolioWebhook`. */
    operationInfix: string;
    tag: string;
    security: 'apiKey' | 'bearer';
    /** OpenAPI parameter objects, one per path parameter, in the order of `path`. */
    pathParameters: object[];
    /** What its authentication answers (400, 401, 403, 404, 429 …). */
    authenticationResponses: Record<string, OpenApiResponse>;
    /** For a create's 403: what else its authentication may refuse with. */
    scopeRefusal: string;
    /** For the 403 of every operation that changes something: how a key that only reads is refused (decision 50); none for a token. */
    readOnlyRefusal?: string;
  };
}

const idParameter = operationParameter('path', 'id', 'The webhook id (`wh_…`)');
const messageIdParameter = operationParameter(
  'path',
  'messageId',
  'The `webhook-id` of the delivery (`msg_…`), as the deliveries list names it',
);

const MALFORMED_PATH = 'VALIDATION_FAILED: the path is not valid percent-encoded UTF-8';
const BODY_ERRORS = {
  '413': error('PAYLOAD_TOO_LARGE: the body is over 16 kB'),
  '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
};
const TARGET_REFUSAL =
  'WEBHOOK_TARGET_NOT_ALLOWED: not https, or the host resolves to a loopback, private, link-local or cloud-metadata address, or does not resolve';

/** Every operation of one owner kind's webhooks (decisions 26 and 45), from its declaration. */
export function webhookOperations(owner: WebhookOwnerDocumentation): OpenApiOperation[] {
  const { docs, noun, limit } = owner;
  const base = `${owner.path.replace(/:([A-Za-z]+)/g, '{$1}')}/webhooks`;
  const name = (verb: string, rest = '') => `${verb}${docs.operationInfix}Webhook${rest}`;
  const common = { tags: [docs.tag], security: docs.security };
  const auth = docs.authenticationResponses;
  // Every operation: its owner's 400s, a path that is not percent-encoded UTF-8, and the operation's own.
  const withAuth = (description?: string) =>
    [auth['400']?.description, MALFORMED_PATH, description].filter((part) => part !== undefined).join(', or ');
  const badRequest = { '400': error(withAuth()) };
  const unknown = (also = ''): Record<string, OpenApiResponse> => ({
    '404': error(
      `${auth['404'] ? `${auth['404'].description}, or ` : ''}WEBHOOK_NOT_FOUND: no webhook with that id belongs to this ${noun}${also}`,
    ),
  });
  const item = [...docs.pathParameters, idParameter];
  /** Decision 50: what changes something answers 403 to a key that only reads (with what else its 403 may say). */
  const forbidden = (...also: string[]): Record<string, OpenApiResponse> => {
    const reasons = [auth['403']?.description, ...also, docs.readOnlyRefusal].filter((reason) => reason !== undefined);
    return reasons.length > 0 ? { '403': error(reasons.join(', or ')) } : {};
  };
  return [
    {
      ...common,
      method: 'post',
      path: base,
      operationId: name('create'),
      summary: 'Subscribe a URL to events',
      description:
        'Decision 26. The answer carries the signing secret, shown only this once. The URL must be https and its host must resolve only ' +
        'to public addresses (decision 28), which is checked again before every delivery. Optional `conditions` filter score.updated ' +
        `(decision 45). At most ${limit} per ${noun}.`,
      parameters: docs.pathParameters,
      requestBody: createWebhookRequestSchema,
      responses: {
        '201': {
          description: 'Created; `secret` appears only in this answer',
          schema: createdWebhookSchema,
          headers: { Location: { description: 'The new webhook', required: true, schema: { type: 'string' } } },
        },
        ...auth,
        '400': error(withAuth(`MALFORMED_JSON, VALIDATION_FAILED (with \`details\`), or ${TARGET_REFUSAL}`)),
        ...forbidden(docs.scopeRefusal),
        '409': error(`WEBHOOK_LIMIT_REACHED: the ${noun} already has ${limit} webhooks`),
        ...BODY_ERRORS,
      },
    },
    {
      ...common,
      method: 'get',
      path: base,
      operationId: name('list', 's'),
      summary: `This ${noun}’s webhooks, oldest first (no secrets)`,
      parameters: docs.pathParameters,
      responses: { '200': { description: 'The webhooks', schema: webhookListSchema }, ...auth, ...badRequest },
    },
    {
      ...common,
      method: 'patch',
      path: `${base}/{id}`,
      operationId: name('update'),
      summary: 'Change a webhook’s URL, events or conditions; pause it, or re-enable it',
      description:
        'Decision 45. Only the fields given change. `enabled: false` pauses an active webhook; `enabled: true` re-enables one paused or ' +
        'disabled, and it hears of events from then on (not of what happened meanwhile). One disabled for its key (`disabledReason` ' +
        '`key_ended` or `key_leaked`, decision 50) is re-enabled only with its `url` set again in the same change: it then answers to ' +
        'the key that set it. `conditions` replaces the conditions as a whole (`{}`: every change). A new URL is checked as at creation ' +
        '(decision 28).',
      parameters: item,
      requestBody: updateWebhookRequestSchema,
      responses: {
        '200': { description: 'The webhook as changed', schema: webhookSchema },
        ...auth,
        '400': error(
          withAuth(
            'MALFORMED_JSON, VALIDATION_FAILED (with `details`; an empty change included, and `enabled: true` without `url` for one ' +
              `disabled for its key: the detail on \`url\` says why), or ${TARGET_REFUSAL}`,
          ),
        ),
        ...forbidden(docs.scopeRefusal),
        ...unknown(),
        ...BODY_ERRORS,
      },
    },
    {
      ...common,
      method: 'delete',
      path: `${base}/{id}`,
      operationId: name('delete'),
      summary: 'Delete a webhook, with the deliveries it still owed',
      parameters: item,
      responses: { '204': { description: 'Deleted' }, ...auth, ...badRequest, ...forbidden(), ...unknown() },
    },
    {
      ...common,
      method: 'get',
      path: `${base}/{id}/deliveries`,
      operationId: name('list', 'Deliveries'),
      summary: 'The latest delivery attempts of a webhook, newest first',
      description:
        'Each attempt with its outcome. A delivery that carries the data of a grant with an allow list (`allowedCidrs`) is sent only to a ' +
        'receiver whose address, resolved and checked when the attempt connects, is inside it; otherwise it is listed with `status: skipped` and ' +
        '`skipped: address_not_allowed`, and is not sent, not retried, and no failure towards disabling the webhook. A grant’s test ' +
        'delivery is bounded like its other deliveries; a portfolio’s test and an organization’s alerts carry no grant’s data and are not.',
      parameters: item,
      responses: { '200': { description: 'The attempts', schema: webhookDeliveryListSchema }, ...auth, ...badRequest, ...unknown() },
    },
    {
      ...common,
      method: 'post',
      path: `${base}/{id}/rotate-secret`,
      operationId: name('rotate', 'Secret'),
      summary: 'Replace the signing secret, the old one still signing during an overlap',
      description:
        'Decision 45. The new secret is shown only in this answer. For `overlapSeconds` every delivery carries two signatures in ' +
        '`webhook-signature`, space-separated (the new secret’s first), as Standard Webhooks allows, so a receiver can switch secrets ' +
        'without losing a delivery; then only the new one. A rotation during an overlap ends the older secret at once.',
      parameters: item,
      requestBody: rotateWebhookSecretRequestSchema,
      responses: {
        '201': { description: 'The new secret; `secret` appears only in this answer', schema: rotatedWebhookSecretSchema },
        ...auth,
        '400': error(withAuth('MALFORMED_JSON or VALIDATION_FAILED (`overlapSeconds` missing, not whole, or outside 0–86400)')),
        ...forbidden(),
        ...unknown(),
        ...BODY_ERRORS,
      },
    },
    {
      ...common,
      method: 'post',
      path: `${base}/{id}/test`,
      operationId: name('test'),
      summary: 'Send a signed `webhook.test` delivery now',
      description:
        'Decision 45. The delivery is queued at once and follows the rules of every delivery (signature, retries with the same `webhook-id`). No body.',
      parameters: item,
      responses: {
        '202': { description: 'Queued; the `webhook-id` it carries', schema: webhookMessageAcceptedSchema },
        ...auth,
        ...badRequest,
        ...forbidden(),
        ...unknown(),
        '409': error('WEBHOOK_NOT_ACTIVE: the webhook is paused or disabled; re-enable it first'),
      },
    },
    {
      ...common,
      method: 'post',
      path: `${base}/{id}/deliveries/{messageId}/redeliver`,
      operationId: name('redeliver', 'Delivery'),
      summary: 'Send one delivery again, with its original body and `webhook-id`',
      description:
        'Decision 45. Any delivery of the last 7 days, delivered or not: queued again with the same payload and `webhook-id` (a new ' +
        '`webhook-timestamp` and signature), and retried on the usual schedule if it fails. No body.',
      parameters: [...item, messageIdParameter],
      responses: {
        '202': { description: 'Queued; the `webhook-id` it carries (the one asked for)', schema: webhookMessageAcceptedSchema },
        ...auth,
        ...badRequest,
        ...forbidden(),
        ...unknown(', or WEBHOOK_MESSAGE_NOT_FOUND: the webhook has no delivery with that messageId in the last 7 days'),
        '409': error('WEBHOOK_NOT_ACTIVE: the webhook is paused or disabled; re-enable it first'),
      },
    },
  ];
}

const DELIVERY_HEADERS = [
  {
    name: 'webhook-id',
    description: 'The message id (`msg_…`): the same on every retry and redelivery of one delivery, so an idempotency key',
    schema: { type: 'string' },
  },
  { name: 'webhook-timestamp', description: 'Whole seconds since the epoch, of this attempt', schema: { type: 'string' } },
  {
    name: 'webhook-signature',
    description:
      '`v1,<base64 HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{body}">` keyed with the secret’s decoded bytes; during a ' +
      'secret rotation’s overlap, two of them, space-separated',
    schema: { type: 'string' },
  },
];
const RECEIVER_ANSWERS = {
  '2XX': { description: 'Received: the delivery is done' },
  default: { description: 'Any other answer, or none within 10 s, is retried with exponential backoff for 24 h (the same `webhook-id`)' },
};

/** Decision 44: an organization's alerts, each `{ type, timestamp, data }` with the grant's `clientId` (or the review's id) and what happened. */
const ALERT_PAYLOADS = [
  { payload: authorizationExpiringPayloadSchema, summary: 'A grant expires in 7 days, then in 1 day' },
  { payload: authorizationFirstUsePayloadSchema, summary: 'A grant’s first successful read' },
  { payload: authorizationNewAddressPayloadSchema, summary: 'A successful read from an address not seen for the grant in 30 days' },
  { payload: authorizationAuthFailuresPayloadSchema, summary: '20 or more failed authentications against a Client ID within 5 minutes' },
  { payload: authorizationKeyLeakedPayloadSchema, summary: 'A key of the grant was reported leaked and stopped working' },
  { payload: authorizationReleasedPayloadSchema, summary: 'The recipient released the grant from its portfolio' },
  // Decision 54: an access review's alerts name the review (`data.reviewId`), not a grant.
  { payload: accessReviewDueSoonPayloadSchema, summary: 'An access review is due within 3 days' },
  { payload: accessReviewCompletedPayloadSchema, summary: 'Every item of an access review is decided' },
];

/** `authorization.first_use` → `authorizationFirstUse`. */
function camelOf(type: string): string {
  return type.replace(/[._]([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

/** Decision 45: every payload the notifier sends, one entry per type. */
const PAYLOADS: OpenApiWebhook[] = [
  {
    name: 'score.updated',
    operationId: 'scoreUpdatedWebhook',
    summary: 'The organization’s latest score changed',
    description:
      'Never more than the grant’s scopes allow: `pillarScores` only with pillar_breakdown. Filtered by the webhook’s `conditions`.',
    payload: scoreUpdatedPayloadSchema,
  },
  {
    name: 'grade.changed',
    operationId: 'gradeChangedWebhook',
    summary: 'The latest score’s grade changed',
    payload: gradeChangedPayloadSchema,
  },
  {
    name: 'authorization.ended',
    operationId: 'authorizationEndedWebhook',
    summary: 'The grant was revoked or expired; its webhooks stop after this',
    payload: authorizationEndedPayloadSchema,
  },
  ...ALERT_PAYLOADS.map(({ payload, summary }) => ({
    name: payload.shape.type.value,
    operationId: `${camelOf(payload.shape.type.value)}Webhook`,
    summary: `${summary} (an organization’s alert webhooks)`,
    payload,
  })),
  {
    name: 'webhook.test',
    operationId: 'webhookTestWebhook',
    summary: 'A test delivery its owner asked for (POST …/webhooks/{id}/test)',
    payload: webhookTestPayloadSchema,
  },
].map((hook) => ({ ...hook, tags: ['Deliveries'], headers: DELIVERY_HEADERS, responses: RECEIVER_ANSWERS }));

export function notifierOpenApi(owners: readonly WebhookOwnerDocumentation[]): object {
  return withExamples(
    buildOpenApiDocument(
      {
        title: 'Resilience Score Notifier API',
        version: PRODUCT_VERSION,
        description:
          'Webhooks for recipients: a POST to your URL when an organization’s latest score or grade changes, and when your ' +
          'authorization ends. Authenticated like the read API: the Client ID in the path and the `x-api-key` header. ' +
          'Organizations subscribe to alerts about their grants under /organizations/{organizationId}/webhooks with the ' +
          'credentials service’s bearer token. Deliveries ' +
          'follow Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`); a failed one is retried with ' +
          'exponential backoff for 24 h with the same `webhook-id`, then the webhook is disabled. The `webhooks` section describes ' +
          'every payload.',
      },
      owners.flatMap(webhookOperations),
      PAYLOADS,
    ),
  );
}
