import { credentialsOpenApi } from './openapi';

type Operation = { responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: unknown }> };
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { properties?: object }> } };

const document = credentialsOpenApi() as Document;
const revoke = document.paths['/organizations/{organizationId}/authorizations/{clientId}/revoke']?.post;

describe('credentials API documentation', () => {
  test('when a revoke cannot reach the event log in time, then the document describes its 202 with enforcement pending', () => {
    expect(Object.keys(revoke?.responses ?? {})).toEqual(['200', '202', '400', '401', '403', '404', '405', '408', '431', '503']);
    expect(revoke?.responses['202']?.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/PendingRevocation' } },
    });
    expect(document.components.schemas.PendingRevocation?.properties).toHaveProperty(
      'enforcement',
      expect.objectContaining({ const: 'pending' }),
    );
  });

  test('when a token is refused, then the 401 documents its WWW-Authenticate challenge', () => {
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        expect([method, path, operation.responses['401']?.headers]).toEqual([method, path, { 'WWW-Authenticate': expect.anything() }]);
      }
    }
  });
});

describe('credentials API documentation: usage and the access log (decisions 20 and 21)', () => {
  test('when an authorization is described, then it carries lastUsedAt and usage', () => {
    expect(Object.keys(document.components.schemas.Authorization?.properties ?? {})).toEqual(
      expect.arrayContaining(['lastUsedAt', 'usage']),
    );
  });

  test('when the access log is described, then its page, its limit and cursor and its refusals are there', () => {
    const accessLog = document.paths['/organizations/{organizationId}/authorizations/{clientId}/access-log']?.get;

    expect(Object.keys(accessLog?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404']));
    expect(accessLog?.responses['200']?.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/AccessLogPage' } },
    });
    expect(Object.keys(document.components.schemas.AccessLogEntry?.properties ?? {}).sort()).toEqual([
      'at',
      'clientAddress',
      'code',
      'requestId',
      'resource',
      'status',
    ]);
  });
});
