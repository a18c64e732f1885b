import { z } from 'zod';
import {
  HISTORY_LIMIT,
  PORTFOLIO_LIMIT,
  certificateResourceSchema,
  pillarBreakdownResourceSchema,
  portfolioCertificatesPageSchema,
  portfolioCustomersPageSchema,
  portfolioPillarsPageSchema,
  portfolioSchema,
  portfolioScoresPageSchema,
  scoreHistoryResourceSchema,
  scoreResourceSchema,
} from '@rsd/contracts';
import {
  buildOpenApiDocument,
  clientIdPathParameter,
  ed25519KeySetSchema,
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

/** What of the read API's configuration its document states: the Client ID's prefix, the rate limits and the feed's staleness bound. */
export interface ReadApiDocumentSettings {
  CLIENT_ID_PREFIX: string;
  RATE_LIMIT_PER_MINUTE: number;
  ACCOUNT_RATE_LIMIT_PER_MINUTE: number;
  FEED_STALENESS_BOUND_MS: number;
}

const rateLimitHeaders = {
  RateLimit: text('Requests left in the current window (IETF draft 8)'),
  'RateLimit-Policy': text('The quota and its window (IETF draft 8)'),
};
const noStore = { 'Cache-Control': text('`no-store`: customer data and the errors about it are per caller') };
const etag = { ETag: text("Strong entity tag of the representation (the body's SHA-256); send it back in If-None-Match") };
// Decision 24: every 200 of a customer resource is signed (RFC 9421, Ed25519; keys at /.well-known/jwks.json).
const signatureHeaders = {
  'Content-Digest': text('RFC 9530 `sha-256` digest of the body'),
  'Signature-Input': text("RFC 9421: covers `@status`, `content-type`, `content-digest` and the request's `@path`; `keyid` names the key"),
  Signature: text('RFC 9421 Ed25519 signature, verifiable with the key of that `keyid` at /.well-known/jwks.json'),
};
const retryAfter = (description: string): Record<string, OpenApiHeader> => ({
  'Retry-After': { description, required: true, schema: { type: 'string', pattern: '^[1-9][0-9]*$' } },
});

/** Published signing keys: Ed25519 public JWKs. */
const jwksSchema = ed25519KeySetSchema('JsonWebKeySet', 'The public keys that sign customer resources');

/** The OpenAPI 3.1 document of the read API, from the same zod schemas the contracts define. */
export function readApiOpenApi(config: ReadApiDocumentSettings): object {
  const clientIdParameter = clientIdPathParameter(config.CLIENT_ID_PREFIX);
  const ifNoneMatchParameter = operationParameter(
    'header',
    'If-None-Match',
    'ETags of representations the caller holds (or `*`): when one is current, the answer is 304 without a body',
  );
  const dateParameter = (name: 'from' | 'to', description: string) =>
    operationParameter('query', name, `${description}; INVALID_PARAMETER (400) when not a calendar date or when from is after to`, {
      type: 'string',
      format: 'date',
    });
  const ok = (description: string, schema: z.ZodType, headers: Record<string, OpenApiHeader> = {}): OpenApiResponse => ({
    description,
    schema,
    headers: { ...etag, ...signatureHeaders, ...rateLimitHeaders, ...noStore, ...headers },
  });
  const common: Record<string, OpenApiResponse> = {
    '304': {
      description: 'Not Modified: If-None-Match names the current representation; no body. Counts towards the rate limit',
      headers: { ...etag, ...rateLimitHeaders, ...noStore },
    },
    '400': error('MISSING_CLIENT_ID or INVALID_CLIENT_ID (checked before any credential lookup)'),
    '401': error(
      'MISSING_API_KEY, INVALID_API_KEY or CREDENTIAL_INACTIVE (revoked, expired or not active). A recipient account key (`rsa_…`, decision 42) ' +
        'is accepted for any grant its account holds, with the same checks; for a grant it does not hold, INVALID_API_KEY',
    ),
    '403': error(
      'ADDRESS_NOT_ALLOWED (the credential has an allow list and this client address is not on it; checked after CREDENTIAL_INACTIVE and before the rate limit), INSUFFICIENT_SCOPE, or blocked by the edge security policy (then without `code`)',
    ),
    '429': error(
      `Rate limit exceeded (${config.RATE_LIMIT_PER_MINUTE} requests per minute per credential, ${config.ACCOUNT_RATE_LIMIT_PER_MINUTE} per recipient account when read with its key, or too many failed authentications from one address); no \`code\``,
      { ...retryAfter('Whole seconds to wait before retrying (at least 1)'), ...rateLimitHeaders },
    ),
    '503': error(
      `SERVICE_UNAVAILABLE: this replica has been out of touch with the event log for longer than ${config.FEED_STALENESS_BOUND_MS / 1000} s, ` +
        'so it might have missed a revocation; it answers no customer resource until it has caught up (decision 29)',
      retryAfter('Seconds after which another try may succeed'),
    ),
  };
  const customerDescription = (text: string) =>
    `${text} Other methods than GET and HEAD answer 405 with \`Allow: GET, HEAD\`. Every 200 carries a strong ETag and an ` +
    'RFC 9421 signature; a matching If-None-Match gets 304.';
  const customers = { tags: ['Customers'], security: 'apiKey' as const };
  const operations: OpenApiOperation[] = [
    {
      ...customers,
      method: 'get',
      path: '/customers/{clientId}/score',
      operationId: 'getScore',
      summary: 'Latest score and grade',
      description: customerDescription('Needs the qr_score scope. The latest score is the one with the most recent scoreDate.'),
      parameters: [clientIdParameter, ifNoneMatchParameter],
      responses: {
        '200': ok('The latest score', scoreResourceSchema),
        ...common,
        '404': error('CREDENTIAL_NOT_FOUND, or SCORE_NOT_FOUND when no score has been calculated yet'),
      },
    },
    {
      ...customers,
      method: 'get',
      path: '/customers/{clientId}/pillars',
      operationId: 'getPillars',
      summary: 'Four-pillar breakdown of the latest score',
      description: customerDescription('Needs the pillar_breakdown scope. Carries no composite: read it from the score.'),
      parameters: [clientIdParameter, ifNoneMatchParameter],
      responses: {
        '200': ok('The pillar breakdown of the latest score', pillarBreakdownResourceSchema),
        ...common,
        '404': error('CREDENTIAL_NOT_FOUND, or PILLARS_NOT_FOUND when no score has been calculated yet'),
      },
    },
    {
      ...customers,
      method: 'get',
      path: '/customers/{clientId}/score/history',
      operationId: 'listScoreHistory',
      summary: 'Score trend, newest first, with what changed (extension)',
      description: customerDescription(
        'Needs the score_trend scope. One entry per scoreDate, each with its change from the next older one ' +
          '(pillar deltas and the driving pillar only when the credential also holds pillar_breakdown); an empty list when ' +
          'no score exists in the range. A page that is not the last has `nextCursor` and a `Link: <…>; rel="next"` header.',
      ),
      parameters: [
        clientIdParameter,
        dateParameter('from', 'Oldest scoreDate to include (inclusive)'),
        dateParameter('to', 'Newest scoreDate to include (inclusive)'),
        ...pageParameters(HISTORY_LIMIT, 'How many dates per page'),
        ifNoneMatchParameter,
      ],
      responses: {
        '200': ok('Scores, newest first', scoreHistoryResourceSchema, {
          Link: text('`<next page URL>; rel="next"` when `nextCursor` is not null', false),
        }),
        ...common,
        '400': error('MISSING_CLIENT_ID or INVALID_CLIENT_ID, or INVALID_PARAMETER for a bad or repeated from, to, limit or cursor'),
        '404': error('CREDENTIAL_NOT_FOUND'),
      },
    },
    {
      ...customers,
      method: 'get',
      path: '/customers/{clientId}/certificate',
      operationId: 'getCertificate',
      summary: 'A signed certificate of the score as it stood on a date (decision 55)',
      description:
        'Needs the qr_score scope; the pillars are in it only when the credential also holds pillar_breakdown. The certificate holds ' +
        'the score that was the latest on asOf (the one with the greatest scoreDate not after it: on the day of a score, that score), ' +
        'names the organization and the recipient, and is answered with the same as a compact JWS (EdDSA, `kid` of a key at ' +
        '/.well-known/jwks.json, `typ` rsd-certificate+json) that anyone can verify offline; a key retired from signing stays published. ' +
        'With `Accept: application/pdf`, the same certificate as a one-page PDF whose text can be searched, carrying the JWS in its ' +
        "Keywords and as a QR code. Each is issued anew (its issuedAt is the request's), so only `If-None-Match: *` gets a 304; the 200 is signed " +
        '(RFC 9421) as every read is. A fetch is a read in the access log (resource `certificate`). Other methods than GET and HEAD answer 405.',
      parameters: [
        clientIdParameter,
        {
          name: 'asOf',
          in: 'query',
          required: false,
          description:
            'The date the certificate speaks for, YYYY-MM-DD (UTC); today when omitted. INVALID_PARAMETER (400) when not a calendar ' +
            'date, repeated, or after today',
          schema: { type: 'string', format: 'date' },
        },
        operationParameter('header', 'Accept', '`application/pdf` for the PDF; otherwise JSON'),
      ],
      responses: {
        '200': {
          ...ok('The certificate and its JWS, or (Accept: application/pdf) the PDF', certificateResourceSchema, {
            Vary: text('`Accept`: JSON or PDF'),
          }),
          alsoAs: ['application/pdf'],
        },
        ...common,
        '400': error('MISSING_CLIENT_ID or INVALID_CLIENT_ID, or INVALID_PARAMETER for a bad, repeated or future asOf'),
        '404': error('CREDENTIAL_NOT_FOUND, or SCORE_NOT_FOUND when no score had been calculated by asOf'),
      },
    },
    ...portfolioOperations(config, { ok, ifNoneMatchParameter, common }),
    {
      method: 'get',
      path: '/.well-known/jwks.json',
      operationId: 'getSigningKeys',
      servers: [{ url: '/' }],
      summary: 'The keys that sign customer resources',
      description:
        'Every key a current signature may name (`keyid`); during a key change both. Public; may be cached for 5 minutes. ' +
        'Subject to the edge policy like every path but /healthz.',
      tags: ['Signatures'],
      security: 'public',
      responses: {
        '200': {
          description: 'The public keys',
          schema: jwksSchema,
          headers: { 'Cache-Control': text('`public, max-age=300`') },
        },
        '403': error('Blocked by the edge security policy (without `code`)'),
      },
    },
  ];
  return withExamples(
    buildOpenApiDocument(
      {
        title: 'Resilience Score Data API',
        version: PRODUCT_VERSION,
        description:
          "Read-only access to one customer organization's resilience score, grade and pillar breakdown. " +
          'Authenticate with the Client ID in the path and the API key in the x-api-key header.',
      },
      operations,
    ),
  );
}

/** Decision 42: the pages of a recipient account, read with its key alone. */
function portfolioOperations(
  config: Pick<ReadApiDocumentSettings, 'ACCOUNT_RATE_LIMIT_PER_MINUTE' | 'FEED_STALENESS_BOUND_MS'>,
  parts: {
    ok: (description: string, schema: z.ZodType, headers?: Record<string, OpenApiHeader>) => OpenApiResponse;
    ifNoneMatchParameter: object;
    common: Record<string, OpenApiResponse>;
  },
): OpenApiOperation[] {
  const { ok, ifNoneMatchParameter, common } = parts;
  const portfolio = { tags: ['Portfolio'], security: 'apiKey' as const };
  const responses = (description: string, schema: z.ZodType, paged: boolean) => ({
    '200': ok(description, schema, paged ? { Link: text('`<next page URL>; rel="next"` when `nextCursor` is not null', false) } : {}),
    '304': common['304'] as OpenApiResponse,
    '400': error('INVALID_PARAMETER for a bad or repeated limit or cursor'),
    '401': error('MISSING_API_KEY, or INVALID_API_KEY: not a recipient account key that works now'),
    '403': error('Blocked by the edge security policy (without `code`)'),
    '429': common['429'] as OpenApiResponse,
    '503': common['503'] as OpenApiResponse,
  });
  const describe = (text: string) =>
    `${text} Authenticate with the recipient account key (\`rsa_…\`) in x-api-key; ${config.ACCOUNT_RATE_LIMIT_PER_MINUTE} requests per ` +
    'minute per account over everything it reads, a page counting once. Other methods than GET and HEAD answer 405. Every 200 carries a ' +
    'strong ETag and an RFC 9421 signature; a matching If-None-Match gets 304.';
  const paging = pageParameters(PORTFOLIO_LIMIT, 'How many grants per page');
  const pageNote =
    ' In a stable order; a page may hold fewer items than `limit` (a grant that ended since, one without the scope or a score, or one ' +
    'left out for this client address), and a page that is not the last has `nextCursor` and a `Link: <…>; rel="next"` header. ' +
    'A grant whose allow list (allowedCidrs) does not admit the address the page is read from is left out, its read is not in its ' +
    "organization's access log, and `leftOut.addressNotAllowed` counts such grants of the page's range (always present, 0 when none).";
  return [
    {
      ...portfolio,
      method: 'get',
      path: '/portfolio',
      operationId: 'getPortfolio',
      summary: 'The recipient account and how many active grants it holds',
      description: describe('The account a recipient holds its grants in (decision 42).'),
      parameters: [ifNoneMatchParameter],
      responses: responses('The account', portfolioSchema, false),
    },
    {
      ...portfolio,
      method: 'get',
      path: '/portfolio/customers',
      operationId: 'listPortfolioCustomers',
      summary: 'The active grants the account holds',
      description: describe(
        `Each grant as its organization made it: scopes and expiry, if its allow list admits this client address.${pageNote}`,
      ),
      parameters: [...paging, ifNoneMatchParameter],
      responses: responses('A page of grants', portfolioCustomersPageSchema, true),
    },
    {
      ...portfolio,
      method: 'get',
      path: '/portfolio/scores',
      operationId: 'listPortfolioScores',
      summary: 'The latest score of every grant that allows it',
      description: describe(
        `The Score resource of each active grant that holds qr_score, has a score, and whose allow list (if any) admits this client address.${pageNote}`,
      ),
      parameters: [...paging, ifNoneMatchParameter],
      responses: responses('A page of scores', portfolioScoresPageSchema, true),
    },
    {
      ...portfolio,
      method: 'get',
      path: '/portfolio/pillars',
      operationId: 'listPortfolioPillars',
      summary: 'The latest pillar breakdown of every grant that allows it',
      description: describe(
        `The Pillar breakdown resource of each active grant that holds pillar_breakdown, has a score, and whose allow list (if any) admits this client address.${pageNote}`,
      ),
      parameters: [...paging, ifNoneMatchParameter],
      responses: responses('A page of pillar breakdowns', portfolioPillarsPageSchema, true),
    },
    {
      ...portfolio,
      method: 'get',
      path: '/portfolio/certificates',
      operationId: 'listPortfolioCertificates',
      summary: 'A certificate of every grant that allows it, on a date (decision 55)',
      description: describe(
        'The certificate (with its JWS) on asOf of each active grant that holds qr_score, had a score by asOf, and whose allow list ' +
          "(if any) admits this client address, as getCertificate answers it; each is a read in its grant's access log. The next " +
          `page's link keeps asOf.${pageNote}`,
      ),
      parameters: [
        {
          name: 'asOf',
          in: 'query',
          required: false,
          description: 'YYYY-MM-DD (UTC), today when omitted; INVALID_PARAMETER (400) when not a calendar date, repeated, or after today',
          schema: { type: 'string', format: 'date' },
        },
        ...paging,
        ifNoneMatchParameter,
      ],
      responses: {
        ...responses('A page of certificates', portfolioCertificatesPageSchema, true),
        '400': error('INVALID_PARAMETER for a bad or repeated limit or cursor, or a bad, repeated or future asOf'),
      },
    },
  ];
}
