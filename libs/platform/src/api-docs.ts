import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import express, { type Express } from 'express';
import { z } from 'zod';
import { errorBodySchema } from '@rsd/contracts';
import { methodNotAllowed } from './http-errors';
import { pageHeaders, type PageAllowances } from './page-headers';

/** A response header; `required` ones are on every response with that status. */
export interface OpenApiHeader {
  description: string;
  required?: boolean;
  schema: object;
}

export interface OpenApiResponse {
  description: string;
  /** The JSON body; none for a response without a body (a 304). */
  schema?: z.ZodType;
  headers?: Record<string, OpenApiHeader>;
  /** Also (or, without `schema`, only) answered as an HTML page: a browser's request. */
  html?: boolean;
  /** Other media types the same answer is also given in when Accept asks for them (a PDF): their bytes, documented as binary. */
  alsoAs?: string[];
  /** Also answered, by `Accept`, as these exports (decision 54): `text/csv` and (when described) `application/x-ndjson`. */
  exports?: { csv: string; ndjson?: string };
}

export interface OpenApiOperation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  /** Stable and camelCase: the SDKs take their method names from it (decision 36). */
  operationId: string;
  /** For a path outside the document's `/v1` base (`/.well-known/jwks.json`): `[{ url: '/' }]`. */
  servers?: { url: string }[];
  summary: string;
  description?: string;
  tags?: string[];
  /** `public`: no credential at all (`security: []`), so no tool reads the operation as needing one. */
  security: 'apiKey' | 'bearer' | 'public';
  parameters?: object[];
  requestBody?: z.ZodType;
  /** A body the operation also accepts absent (default: required). */
  requestBodyOptional?: boolean;
  responses: Record<string, OpenApiResponse>;
}

/**
 * A request this service makes to its users' URLs (OpenAPI 3.1's `webhooks`): a POST of `payload`,
 * and what the receiver's answers mean.
 */
export interface OpenApiWebhook {
  /** The key in `webhooks`: the payload's type (`score.updated`). */
  name: string;
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  payload: z.ZodType;
  /** The request headers the receiver gets. */
  headers?: { name: string; description: string; schema: object }[];
  responses: Record<string, { description: string }>;
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
}

/**
 * What any route answers before or beside its own logic: the HTTP server's refusals (http-server.ts: a
 * request that is not valid HTTP, headers over the size limit, a request not received within its
 * timeout; bodies without `code`), and 503 while the service is starting (starting.ts) or when a
 * store it needs is unreachable (http-errors.ts).
 */
const COMMON_RESPONSES: Record<string, OpenApiResponse> = {
  '400': { description: 'The request is not valid HTTP; the connection is closed', schema: errorBodySchema },
  '408': {
    description: "The request was not received within the server's request timeout; the connection is closed",
    schema: errorBodySchema,
  },
  '405': {
    description: 'METHOD_NOT_ALLOWED: the path exists but does not answer this method',
    schema: errorBodySchema,
    headers: { Allow: { description: 'The methods the path answers', required: true, schema: { type: 'string' } } },
  },
  '431': { description: 'The request headers are larger than the server accepts; the connection is closed', schema: errorBodySchema },
  '503': {
    description: 'SERVICE_UNAVAILABLE: the service is still starting (waiting for its dependencies), or a store it needs is unreachable',
    schema: errorBodySchema,
    headers: { 'Retry-After': { description: 'Seconds after which another try may succeed', required: true, schema: { type: 'string' } } },
  },
};

/**
 * An operation's responses and the common ones; where both have a status, the descriptions are joined
 * and so are the headers, a header required only when both always send it.
 */
function withCommonResponses(own: Record<string, OpenApiResponse>): Record<string, OpenApiResponse> {
  const merged = { ...COMMON_RESPONSES, ...own };
  for (const [status, common] of Object.entries(COMMON_RESPONSES)) {
    const response = own[status];
    if (!response) continue;
    const headers: Record<string, OpenApiHeader> = {};
    for (const [name, header] of Object.entries({ ...common.headers, ...response.headers })) {
      headers[name] = { ...header, required: Boolean(common.headers?.[name]?.required && response.headers?.[name]?.required) };
    }
    merged[status] = {
      ...response,
      description: `${response.description}. Also: ${common.description}`,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    };
  }
  return merged;
}

const SECURITY_SCHEMES = {
  apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
  bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
} as const;

/**
 * OpenAPI 3.1 from the same zod schemas the code validates with: 3.1 is JSON Schema 2020-12,
 * which is what zod emits, so nothing is described twice.
 */
export function buildOpenApiDocument(info: OpenApiInfo, operations: OpenApiOperation[], webhooks: OpenApiWebhook[] = []): object {
  const { schemas: registered } = z.toJSONSchema(z.globalRegistry, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  });
  const ref = (schema: z.ZodType): object => {
    const id = z.globalRegistry.get(schema)?.id;
    return id ? { $ref: `#/components/schemas/${id}` } : withoutDialect(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }));
  };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const responses: Record<string, object> = {};
    for (const [status, response] of Object.entries(withCommonResponses(op.responses))) {
      responses[status] = {
        description: response.description,
        ...(response.headers ? { headers: response.headers } : {}),
        ...(response.schema || response.html || response.alsoAs
          ? {
              content: {
                ...(response.schema ? { 'application/json': { schema: ref(response.schema) } } : {}),
                ...(response.html ? { 'text/html': { schema: { type: 'string' } } } : {}),
                ...Object.fromEntries((response.alsoAs ?? []).map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
                ...(response.exports
                  ? {
                      'text/csv': { schema: { type: 'string', description: response.exports.csv } },
                      ...(response.exports.ndjson === undefined
                        ? {}
                        : { 'application/x-ndjson': { schema: { type: 'string', description: response.exports.ndjson } } }),
                    }
                  : {}),
              },
            }
          : {}),
      };
    }
    const pathItem = (paths[op.path] ??= op.servers ? { servers: op.servers } : {});
    pathItem[op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      ...(op.tags ? { tags: op.tags } : {}),
      security: op.security === 'public' ? [] : [{ [op.security]: [] }],
      ...(op.parameters ? { parameters: op.parameters } : {}),
      ...(op.requestBody
        ? { requestBody: { required: !op.requestBodyOptional, content: { 'application/json': { schema: ref(op.requestBody) } } } }
        : {}),
      responses,
    };
  }
  const webhookItems: Record<string, object> = {};
  for (const hook of webhooks) {
    webhookItems[hook.name] = {
      post: {
        operationId: hook.operationId,
        summary: hook.summary,
        ...(hook.description ? { description: hook.description } : {}),
        ...(hook.tags ? { tags: hook.tags } : {}),
        // The receiver's URL takes no credential of ours: the request is signed instead.
        security: [],
        ...(hook.headers
          ? {
              parameters: hook.headers.map(({ name, description, schema }) => ({
                name,
                in: 'header',
                required: true,
                description,
                schema,
              })),
            }
          : {}),
        requestBody: { required: true, content: { 'application/json': { schema: ref(hook.payload) } } },
        responses: hook.responses,
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { ...info, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
    servers: [{ url: '/v1' }],
    paths,
    ...(webhooks.length > 0 ? { webhooks: webhookItems } : {}),
    components: {
      // Only the schemas this service's operations and webhooks reach, not every contract in the registry.
      schemas: reachableSchemas({ paths, webhookItems }, registered),
      // Only the schemes its operations use.
      securitySchemes: Object.fromEntries(
        Object.entries(SECURITY_SCHEMES).filter(([name]) => operations.some((op) => op.security === name)),
      ),
    },
  };
}

/**
 * A schema without `$schema` and `$id`: the document states the dialect once, and zod's `$id`s
 * (`#/components/schemas/Score`, from `uri`) are fragments, which JSON Schema 2020-12 forbids there
 * (openapi-spec-validator refuses the document). The `$ref`s point at the components all the same.
 */
function withoutDialect(schema: object): object {
  const { $schema: _dialect, $id: _id, ...rest } = schema as Record<string, unknown>;
  return rest;
}

function reachableSchemas(root: object, registered: Record<string, object>): Record<string, object> {
  const found: Record<string, object> = {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const id = value.replace('#/components/schemas/', '');
        const schema = registered[id];
        if (schema && !(id in found)) {
          found[id] = withoutDialect(schema);
          visit(schema);
        }
      } else {
        visit(value);
      }
    }
  };
  visit(root);
  return Object.fromEntries(Object.entries(found).sort(([a], [b]) => a.localeCompare(b)));
}

const requireFromHere = createRequire(__filename);

/**
 * Where swagger-ui-dist's files are, found without loading its index: that would load the 1 MB
 * browser bundle into the server (slower start, more memory, and Node 26's localStorage warning).
 */
const SWAGGER_UI_ASSETS = dirname(requireFromHere.resolve('swagger-ui-dist/package.json'));

/** `/v1/openapi.json` and a Swagger UI page at `/docs` served from the installed package: no CDN. */
export function mountApiDocs(app: Express, document: object): void {
  const title = (document as { info?: { title?: string } }).info?.title ?? 'API';
  const page = docsPage(title);
  const readOnly = methodNotAllowed(['GET', 'HEAD']);
  app
    .route('/v1/openapi.json')
    .get((_req, res) => {
      res.json(document);
    })
    .all(readOnly);
  // The page and its files: the one page policy, with the `data:` images Swagger UI's stylesheet draws its icons with.
  app.use('/docs', pageHeaders(DOCS_ALLOWANCES));
  app
    .route('/docs')
    .get((_req, res) => {
      res.type('html').send(page);
    })
    .all(readOnly);
  app
    .route('/docs/docs-init.js')
    .get((_req, res) => {
      res.type('js').send(DOCS_INIT);
    })
    .all(readOnly);
  app.use('/docs', express.static(SWAGGER_UI_ASSETS, { index: false, maxAge: '1h' }));
}

const DOCS_ALLOWANCES: PageAllowances = { images: ['data:'] };

// validatorUrl null: Swagger UI would otherwise call an online validator.
const DOCS_INIT = "window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#ui', validatorUrl: null, deepLinking: true });\n";

function docsPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${title}</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/docs-init.js"></script>
</body></html>`;
}
