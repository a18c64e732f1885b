import {
  authorizationListSchema,
  authorizationSchema,
  createAuthorizationRequestSchema,
  createdAuthorizationSchema,
  errorBodySchema,
} from '@rsd/contracts';
import { buildOpenApiDocument, type OpenApiOperation } from '@rsd/platform';

const organizationIdParameter = {
  name: 'organizationId',
  in: 'path',
  required: true,
  description: "The organization the caller administers (the token's `org` claim)",
  schema: { $ref: '#/components/schemas/OrganizationId' },
};
const clientIdParameter = {
  name: 'clientId',
  in: 'path',
  required: true,
  description: 'The Client ID exactly as issued',
  schema: { $ref: '#/components/schemas/ClientId' },
};

const error = (description: string) => ({ description, schema: errorBodySchema });
const callerErrors = {
  '400': error('INVALID_ORGANIZATION_ID'),
  '401': error('INVALID_TOKEN: the bearer token is missing, malformed, expired or not signed by a trusted key'),
  '403': error('FORBIDDEN_ORGANIZATION (the token administers another organization) or INSUFFICIENT_SCOPE (no authorizations:write)'),
};
const tags = ['Authorizations'];

const operations: OpenApiOperation[] = [
  {
    method: 'post',
    path: '/organizations/{organizationId}/authorizations',
    summary: 'Create an authorization and issue its credential pair',
    description:
      'Issues a Client ID and an API key scoped to this organization. The API key is in this response only: ' +
      'the service keeps a one-way digest of it and can never show it again. An `expiresAt` date means ' +
      '"valid through the end of that UTC day" and is answered as the next day\'s 00:00:00.000Z, the first instant ' +
      'the credential no longer works.',
    tags,
    security: 'bearer',
    parameters: [organizationIdParameter],
    requestBody: createAuthorizationRequestSchema,
    responses: {
      '201': { description: 'Created; `Cache-Control: no-store`', schema: createdAuthorizationSchema },
      ...callerErrors,
      '400': error('INVALID_ORGANIZATION_ID, MALFORMED_JSON, or VALIDATION_FAILED with `details` naming every problem'),
      '413': error('PAYLOAD_TOO_LARGE: the body is over 16 kB'),
      '415': error('UNSUPPORTED_MEDIA_TYPE: the body is not application/json'),
    },
  },
  {
    method: 'get',
    path: '/organizations/{organizationId}/authorizations',
    summary: "List the organization's authorizations, newest first",
    tags,
    security: 'bearer',
    parameters: [organizationIdParameter],
    responses: { '200': { description: 'The authorizations, without API keys', schema: authorizationListSchema }, ...callerErrors },
  },
  {
    method: 'get',
    path: '/organizations/{organizationId}/authorizations/{clientId}',
    summary: 'Read one authorization',
    tags,
    security: 'bearer',
    parameters: [organizationIdParameter, clientIdParameter],
    responses: {
      '200': { description: 'The authorization, without its API key', schema: authorizationSchema },
      ...callerErrors,
      '404': error('AUTHORIZATION_NOT_FOUND: no such Client ID in this organization'),
    },
  },
  {
    method: 'post',
    path: '/organizations/{organizationId}/authorizations/{clientId}/revoke',
    summary: 'Revoke an authorization',
    description:
      'The credential stops working at once. Revoking again is a no-op that answers the same record; ' +
      'revoking an authorization that has already expired is a no-op that answers it with status `expired`.',
    tags,
    security: 'bearer',
    parameters: [organizationIdParameter, clientIdParameter],
    responses: {
      '200': { description: 'The authorization, now revoked (or as it was, if already inactive)', schema: authorizationSchema },
      ...callerErrors,
      '404': error('AUTHORIZATION_NOT_FOUND: no such Client ID in this organization'),
    },
  },
];

export function credentialsOpenApi(): object {
  return buildOpenApiDocument(
    {
      title: 'Resilience Score Credentials API',
      version: '1.0.0',
      description:
        'Lets an organization share its resilience score: it creates one authorization per recipient, ' +
        'each with its own Client ID and API key, and may revoke it at any time. Callers authenticate with ' +
        'a bearer JWT whose `org` claim names the organization and whose `scope` includes `authorizations:write`.',
    },
    operations,
  );
}
