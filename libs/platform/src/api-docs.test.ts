import express from 'express';
import { z } from 'zod';
import { buildOpenApiDocument, mountApiDocs, type OpenApiOperation } from './api-docs';
import { closeServer, listen, portOf } from './http-server';

type Document = {
  paths: Record<string, { servers?: unknown; get?: { responses: Record<string, { description: string }> } }>;
};

const info = { title: 'Test API', version: '1.0.0', description: 'for the tests' };

/** The document of one public operation, GET /things, that answers `responses`. */
function documentOfListThings(responses: OpenApiOperation['responses']): Document {
  return buildOpenApiDocument(info, [
    { method: 'get', path: '/things', operationId: 'listThings', security: 'public', summary: 'things', responses },
  ]) as Document;
}

describe('OpenAPI documents', () => {
  test('when an operation is documented, then it also lists what any route may answer (400, 408, 431 from the HTTP server; 405 for another method; 503 starting)', () => {
    const document = documentOfListThings({ '200': { description: 'ok', schema: z.object({}) } });

    const responses = document.paths['/things']?.get?.responses ?? {};

    expect(Object.keys(responses)).toEqual(['200', '400', '405', '408', '431', '503']);
    expect(responses['431']?.description).toMatch(/headers are larger/);
  });

  test('when operations are documented, then each has its operationId and security (none: `[]`), only the schemes used are declared, and no schema carries an `$id`', () => {
    const document = buildOpenApiDocument(info, [
      { method: 'get', path: '/things', operationId: 'listThings', security: 'public', summary: 'things', responses: {} },
      {
        method: 'post',
        path: '/things',
        operationId: 'createThing',
        security: 'bearer',
        summary: 'make one',
        requestBody: z.object({ name: z.string() }).meta({ id: 'NewThing' }),
        responses: {},
      },
    ]) as Document & { components: { schemas: Record<string, object>; securitySchemes: object } };

    const things = document.paths['/things'] as Record<string, { operationId: string; security: unknown }>;
    expect([things.get?.operationId, things.get?.security]).toEqual(['listThings', []]);
    expect([things.post?.operationId, things.post?.security]).toEqual(['createThing', [{ bearer: [] }]]);
    expect(Object.keys(document.components.securitySchemes)).toEqual(['bearer']);
    // JSON Schema 2020-12 forbids a fragment in $id; zod's ids are fragments (openapi-spec-validator refused them).
    expect(document.components.schemas.NewThing).toBeDefined();
    expect(JSON.stringify(document.components.schemas)).not.toContain('"$id"');
  });

  test('when an operation documents a status the HTTP server also answers, then both descriptions are kept', () => {
    const document = documentOfListThings({ '400': { description: 'INVALID_PARAMETER' } });

    expect(document.paths['/things']?.get?.responses['400']?.description).toBe(
      'INVALID_PARAMETER. Also: The request is not valid HTTP; the connection is closed',
    );
  });

  test('when an operation has its own 503 without Retry-After, then the joined 503 documents Retry-After as not always sent', () => {
    const document = documentOfListThings({ '503': { description: 'the event log is down' } });

    const response = document.paths['/things']?.get?.responses['503'] as { description: string; headers: Record<string, unknown> };

    expect(response.description).toMatch(/^the event log is down\. Also: SERVICE_UNAVAILABLE: the service is still starting/);
    expect(response.headers['Retry-After']).toEqual(expect.objectContaining({ required: false }));
  });

  test('when an operation lives outside the /v1 base, then its path item names its own server', () => {
    const document = buildOpenApiDocument(info, [
      {
        method: 'get',
        path: '/.well-known/keys',
        operationId: 'getKeys',
        security: 'public',
        servers: [{ url: '/' }],
        summary: 'keys',
        responses: {},
      },
    ]) as Document;

    expect(document.paths['/.well-known/keys']?.servers).toEqual([{ url: '/' }]);
  });

  test('when the document or the docs page is called with another method than GET or HEAD, then 405 names the allowed ones', async () => {
    const app = express();
    mountApiDocs(app, buildOpenApiDocument(info, []));
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const base = `http://127.0.0.1:${portOf(server)}`;

      const answers = await Promise.all(
        ['/v1/openapi.json', '/docs', '/docs/docs-init.js'].map((path) => fetch(`${base}${path}`, { method: 'DELETE' })),
      );
      const read = await fetch(`${base}/v1/openapi.json`);

      expect(answers.map((answer) => [answer.status, answer.headers.get('allow')])).toEqual([
        [405, 'GET, HEAD'],
        [405, 'GET, HEAD'],
        [405, 'GET, HEAD'],
      ]);
      expect(((await read.json()) as { info: unknown }).info).toMatchObject(info);
    } finally {
      await closeServer(server);
    }
  });
});
