import { WEBHOOK_PAYLOAD_TYPES } from '@rsd/contracts';
import { loadConfig } from '@rsd/platform';
import { notifierConfigSchema } from './config';
import { notifierOpenApi } from '@rsd/api-documents';
import { grantWebhooks } from './webhooks/webhook-owners';

interface Document {
  openapi: string;
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
  webhooks: Record<string, { post: { operationId: string; requestBody: { content: Record<string, { schema: { $ref: string } }> } } }>;
  components: { schemas: Record<string, { properties?: Record<string, { const?: string }> }> };
}

const config = loadConfig(notifierConfigSchema, {});
const refuse = () => Promise.reject(new Error('not called'));

describe("the notifier's OpenAPI document (decision 45)", () => {
  const document = notifierOpenApi([grantWebhooks(refuse, config)]) as Document;

  test('when it is built, then the webhooks section has one entry per payload type, each its own schema with its type', () => {
    expect(Object.keys(document.webhooks)).toEqual([...WEBHOOK_PAYLOAD_TYPES]);
    for (const [type, entry] of Object.entries(document.webhooks)) {
      const ref = entry.post.requestBody.content['application/json']!.schema.$ref;
      const schema = document.components.schemas[ref.replace('#/components/schemas/', '')];
      expect([type, schema?.properties?.type?.const]).toEqual([type, type]);
    }
  });

  test('when it is built, then every lifecycle operation of a grant is there under its path, each with its own operationId', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
    );

    expect(operations).toEqual([
      'POST /customers/{clientId}/webhooks createWebhook',
      'GET /customers/{clientId}/webhooks listWebhooks',
      'PATCH /customers/{clientId}/webhooks/{id} updateWebhook',
      'DELETE /customers/{clientId}/webhooks/{id} deleteWebhook',
      'GET /customers/{clientId}/webhooks/{id}/deliveries listWebhookDeliveries',
      'POST /customers/{clientId}/webhooks/{id}/rotate-secret rotateWebhookSecret',
      'POST /customers/{clientId}/webhooks/{id}/test testWebhook',
      'POST /customers/{clientId}/webhooks/{id}/deliveries/{messageId}/redeliver redeliverWebhookDelivery',
    ]);
    const ids = Object.values(document.webhooks).map((entry) => entry.post.operationId);
    expect(new Set([...operations.map((line) => line.split(' ')[2]), ...ids]).size).toBe(operations.length + ids.length);
  });

  test('when a second owner kind is declared, then its lifecycle is documented under its own path and operation ids, beside the first', () => {
    const portfolio = {
      ...grantWebhooks(refuse, config),
      path: '/portfolio',
      docs: { ...grantWebhooks(refuse, config).docs, operationInfix: 'Portfolio', pathParameters: [] },
    };

    const both = notifierOpenApi([grantWebhooks(refuse, config), portfolio]) as Document;

    expect(Object.keys(both.paths)).toEqual(expect.arrayContaining(['/portfolio/webhooks', '/portfolio/webhooks/{id}/rotate-secret']));
    expect(both.paths['/portfolio/webhooks/{id}']?.patch?.operationId).toBe('updatePortfolioWebhook');
  });

  test('when it is built, then every operation that changes a webhook documents 403 KEY_READ_ONLY, and the reads do not (decision 50)', () => {
    const forbidden = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((operation) => ({
        id: operation.operationId,
        readOnly: JSON.stringify(operation.responses['403'] ?? '').includes('KEY_READ_ONLY'),
      })),
    );

    expect(forbidden).toEqual([
      { id: 'createWebhook', readOnly: true },
      { id: 'listWebhooks', readOnly: false },
      { id: 'updateWebhook', readOnly: true },
      { id: 'deleteWebhook', readOnly: true },
      { id: 'listWebhookDeliveries', readOnly: false },
      { id: 'rotateWebhookSecret', readOnly: true },
      { id: 'testWebhook', readOnly: true },
      { id: 'redeliverWebhookDelivery', readOnly: true },
    ]);
  });
});
