import {
  createdWebhookSchema,
  createWebhookRequestSchema,
  MAX_WEBHOOKS_PER_AUTHORIZATION,
  webhookDeliveryListSchema,
  webhookListSchema,
} from '@rsd/contracts';
import {
  buildOpenApiDocument,
  clientIdPathParameter,
  errorResponse as error,
  type OpenApiOperation,
  type OpenApiResponse,
} from '@rsd/platform';
import type { NotifierConfig } from './config';

export function notifierOpenApi(config: NotifierConfig): object {
  const clientIdParameter = clientIdPathParameter(config.CLIENT_ID_PREFIX);
  const idParameter = { name: 'id', in: 'path', required: true, description: 'The webhook id (`wh_…`)', schema: { type: 'string' } };
  const authentication: Record<string, OpenApiResponse> = {
    '400': error('MISSING_CLIENT_ID or INVALID_CLIENT_ID (checked before any credential lookup)'),
    '401': error('MISSING_API_KEY, INVALID_API_KEY or CREDENTIAL_INACTIVE (revoked, expired or not active)'),
    '403': error(
      'ADDRESS_NOT_ALLOWED (the credential has an allow list and this client address is not on it), or blocked by the edge security policy (then without `code`)',
    ),
    '404': error('CREDENTIAL_NOT_FOUND: no authorization has this Client ID'),
    '429': error(
      `Rate limit exceeded (${config.RATE_LIMIT_PER_MINUTE} requests per minute per credential, shared with the read API, or too many failed authentications from one address); no \`code\``,
      { 'Retry-After': { description: 'Whole seconds to wait before retrying (at least 1)', required: true, schema: { type: 'string' } } },
    ),
  };
  const webhooks = { tags: ['Webhooks'], security: 'apiKey' as const };
  const operations: OpenApiOperation[] = [
    {
      ...webhooks,
      method: 'post',
      path: '/customers/{clientId}/webhooks',
      operationId: 'createWebhook',
      summary: 'Subscribe a URL to score changes and the end of the authorization',
      description:
        'Decision 26. The answer carries the signing secret, shown only this once. The URL must be https and its host must resolve only ' +
        'to public addresses (decision 28), which is checked again before every delivery. Each event must be one the credential’s ' +
        `scopes allow (score.updated: qr_score; grade.changed: qr_score or score_trend). At most ${MAX_WEBHOOKS_PER_AUTHORIZATION} per authorization.`,
      parameters: [clientIdParameter],
      requestBody: createWebhookRequestSchema,
      responses: {
        '201': {
          description: 'Created; `secret` appears only in this answer',
          schema: createdWebhookSchema,
          headers: { Location: { description: 'The new webhook', required: true, schema: { type: 'string' } } },
        },
        ...authentication,
        '400': error(
          'MISSING_CLIENT_ID, INVALID_CLIENT_ID, MALFORMED_JSON, VALIDATION_FAILED (with `details`), or WEBHOOK_TARGET_NOT_ALLOWED: not https, or the host resolves to a loopback, private, link-local or cloud-metadata address, or does not resolve',
        ),
        '403': error(
          'ADDRESS_NOT_ALLOWED, INSUFFICIENT_SCOPE (an event the credential’s scopes do not allow), or blocked by the edge security policy',
        ),
        '409': error(`WEBHOOK_LIMIT_REACHED: the authorization already has ${MAX_WEBHOOKS_PER_AUTHORIZATION} webhooks`),
        '413': error('PAYLOAD_TOO_LARGE: the body is over 16 kB'),
        '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
      },
    },
    {
      ...webhooks,
      method: 'get',
      path: '/customers/{clientId}/webhooks',
      operationId: 'listWebhooks',
      summary: 'This authorization’s webhooks, oldest first (no secrets)',
      parameters: [clientIdParameter],
      responses: { '200': { description: 'The webhooks', schema: webhookListSchema }, ...authentication },
    },
    {
      ...webhooks,
      method: 'delete',
      path: '/customers/{clientId}/webhooks/{id}',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook, with the deliveries it still owed',
      parameters: [clientIdParameter, idParameter],
      responses: {
        '204': { description: 'Deleted' },
        ...authentication,
        '404': error('CREDENTIAL_NOT_FOUND, or WEBHOOK_NOT_FOUND: no webhook with that id belongs to this authorization'),
      },
    },
    {
      ...webhooks,
      method: 'get',
      path: '/customers/{clientId}/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'The latest delivery attempts of a webhook, newest first',
      parameters: [clientIdParameter, idParameter],
      responses: {
        '200': { description: 'The attempts', schema: webhookDeliveryListSchema },
        ...authentication,
        '404': error('CREDENTIAL_NOT_FOUND, or WEBHOOK_NOT_FOUND: no webhook with that id belongs to this authorization'),
      },
    },
  ];
  return buildOpenApiDocument(
    {
      title: 'Resilience Score Notifier API',
      version: '1.0.0',
      description:
        'Webhooks for recipients: a POST to your URL when an organization’s latest score or grade changes, and when your ' +
        'authorization ends. Authenticated like the read API: the Client ID in the path and the `x-api-key` header. Deliveries ' +
        'follow Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`); a failed one is retried with ' +
        'exponential backoff for 24 h with the same `webhook-id`, then the webhook is disabled.',
    },
    operations,
  );
}
