import {
  clientIdPattern,
  errorBodySchema,
  pillarBreakdownResourceSchema,
  scoreHistoryResourceSchema,
  scoreResourceSchema,
} from '@rsd/contracts';
import { buildOpenApiDocument, type OpenApiOperation } from '@rsd/platform';
import type { ReadApiConfig } from './config';
import { HISTORY_LIMIT } from './customers/serve-resource';

const error = (description: string) => ({ description, schema: errorBodySchema });

const rateLimitHeaders = {
  RateLimit: { description: 'Requests left in the current window (IETF draft 8)', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'The quota and its window (IETF draft 8)', schema: { type: 'string' } },
};

/** The OpenAPI 3.1 document of the read API, from the same zod schemas the contracts define. */
export function readApiOpenApi(config: Pick<ReadApiConfig, 'CLIENT_ID_PREFIX' | 'RATE_LIMIT_PER_MINUTE'>): object {
  const clientIdParameter = {
    name: 'clientId',
    in: 'path',
    required: true,
    description: `The Client ID exactly as issued: ${config.CLIENT_ID_PREFIX}_ then 16 to 64 letters or digits`,
    schema: { type: 'string', pattern: clientIdPattern(config.CLIENT_ID_PREFIX).source },
  };
  const authErrors = {
    '400': error('MISSING_CLIENT_ID or INVALID_CLIENT_ID (checked before any credential lookup)'),
    '401': error('MISSING_API_KEY, INVALID_API_KEY or CREDENTIAL_INACTIVE'),
    '403': error('INSUFFICIENT_SCOPE, or blocked by the edge security policy (then without `code`)'),
    '405': error('METHOD_NOT_ALLOWED: only GET and HEAD'),
    '429': {
      description: `Rate limit exceeded (${config.RATE_LIMIT_PER_MINUTE} requests per minute per credential, or too many failed authentications from one address); no \`code\``,
      schema: errorBodySchema,
      headers: {
        'Retry-After': { description: 'Whole seconds to wait before retrying (at least 1)', schema: { type: 'integer', minimum: 1 } },
        ...rateLimitHeaders,
      },
    },
  };
  const common = { tags: ['Customers'], security: 'apiKey' as const };
  const operations: OpenApiOperation[] = [
    {
      ...common,
      method: 'get',
      path: '/customers/{clientId}/score',
      summary: 'Latest score and grade',
      description: 'Needs the qr_score scope. The latest score is the one with the most recent scoreDate.',
      parameters: [clientIdParameter],
      responses: {
        '200': { description: 'The latest score', schema: scoreResourceSchema, headers: rateLimitHeaders },
        ...authErrors,
        '404': error('CREDENTIAL_NOT_FOUND, or SCORE_NOT_FOUND when no score has been calculated yet'),
      },
    },
    {
      ...common,
      method: 'get',
      path: '/customers/{clientId}/pillars',
      summary: 'Four-pillar breakdown of the latest score',
      description: 'Needs the pillar_breakdown scope. Carries no composite: read it from the score.',
      parameters: [clientIdParameter],
      responses: {
        '200': {
          description: 'The pillar breakdown of the latest score',
          schema: pillarBreakdownResourceSchema,
          headers: rateLimitHeaders,
        },
        ...authErrors,
        '404': error('CREDENTIAL_NOT_FOUND, or PILLARS_NOT_FOUND when no score has been calculated yet'),
      },
    },
    {
      ...common,
      method: 'get',
      path: '/customers/{clientId}/score/history',
      summary: 'Score trend, newest first (extension)',
      description: 'Needs the score_trend scope. One entry per scoreDate; an empty list when no score exists yet.',
      parameters: [
        clientIdParameter,
        {
          name: 'limit',
          in: 'query',
          required: false,
          description: 'How many dates to return; INVALID_PARAMETER (400) outside the range',
          schema: { type: 'integer', minimum: HISTORY_LIMIT.min, maximum: HISTORY_LIMIT.max, default: HISTORY_LIMIT.default },
        },
      ],
      responses: {
        '200': { description: 'Scores, newest first', schema: scoreHistoryResourceSchema, headers: rateLimitHeaders },
        ...authErrors,
        '400': error('MISSING_CLIENT_ID, INVALID_CLIENT_ID, or INVALID_PARAMETER for a bad limit'),
        '404': error('CREDENTIAL_NOT_FOUND'),
      },
    },
  ];
  return buildOpenApiDocument(
    {
      title: 'Resilience Score Data API',
      version: '1.0.0',
      description:
        "Read-only access to one customer organization's resilience score, grade and pillar breakdown. " +
        'Authenticate with the Client ID in the path and the API key in the x-api-key header.',
    },
    operations,
  );
}
