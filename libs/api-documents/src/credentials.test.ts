import { credentialsOpenApi } from './credentials';

type Operation = {
  security?: unknown[];
  parameters?: { name: string; in: string }[];
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: unknown }>;
};
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { properties?: object }> } };

const document = credentialsOpenApi() as Document;
const revoke = document.paths['/organizations/{organizationId}/authorizations/{clientId}/revoke']?.post;

describe('credentials API documentation', () => {
  test('when a revoke cannot reach the event log in time, then the document describes its 202 with enforcement pending', () => {
    expect(Object.keys(revoke?.responses ?? {})).toEqual(['200', '202', '400', '401', '403', '404', '405', '408', '431', '503']);
    expect(revoke?.responses['202']?.content).toMatchObject({
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
        // The claim link's operations are public (decision 38): no token, no 401. The portfolio's take an account key (decision 42), not a token.
        if (method === 'servers' || operation.security?.length === 0 || path.startsWith('/portfolio/')) continue;
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
    expect(accessLog?.responses['200']?.content).toMatchObject({
      'application/json': { schema: { $ref: '#/components/schemas/AccessLogPage' } },
      // Decision 54: the same log as exports.
      'text/csv': { schema: { type: 'string' } },
      'application/x-ndjson': { schema: { type: 'string' } },
    });
    expect((accessLog?.parameters ?? []).map((parameter) => parameter.name)).toEqual(
      expect.arrayContaining(['from', 'to', 'status', 'address', 'resource', 'limit', 'cursor']),
    );
    expect(Object.keys(document.components.schemas.AccessLogEntry?.properties ?? {}).sort()).toEqual([
      'at',
      // Decision 55: a certificate fetch's date and format.
      'certificate',
      'clientAddress',
      'code',
      'requestId',
      'resource',
      'status',
    ]);
  });
});

describe('credentials API documentation: claim links (decision 38)', () => {
  test("when the claim link is described, then GET and POST are public, answer JSON or redirect a browser to the console's page, and document every refusal", () => {
    const claim = document.paths['/claim/{token}'];

    expect(claim?.get?.security).toEqual([]);
    expect(Object.keys(claim?.get?.responses ?? {})).toEqual(expect.arrayContaining(['200', '307', '404', '410', '429', '405', '503']));
    expect(claim?.get?.responses['200']?.content).toMatchObject({
      'application/json': { schema: { $ref: '#/components/schemas/ClaimGrant' } },
    });
    expect(Object.keys(claim?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(['201', '307', '400', '403', '404', '410', '415', '429']),
    );
    expect(claim?.post?.responses['403']?.content).toMatchObject({
      'application/json': { schema: { $ref: '#/components/schemas/Error' } },
    });
    expect(claim?.post?.responses['403']?.description).toMatch(/KEY_READ_ONLY/);
  });

  test('when what an account key changes is described, then the previous key of an overlap is refused with 403 KEY_READ_ONLY (decision 50)', () => {
    for (const operation of [document.paths['/portfolio/keys/rotate']?.post, document.paths['/portfolio/customers/{clientId}']?.delete]) {
      expect(operation?.responses['403']?.description).toMatch(/^KEY_READ_ONLY/);
    }
  });

  test('when a new link is described, then its 409 names both refusals', () => {
    const reissue = document.paths['/organizations/{organizationId}/authorizations/{clientId}/claim-link']?.post;

    expect(reissue?.responses['409']?.description).toMatch(/KEY_ALREADY_CLAIMED.*AUTHORIZATION_INACTIVE/);
    expect(Object.keys(document.components.schemas.Authorization?.properties ?? {})).toEqual(
      expect.arrayContaining(['keyClaimed', 'claimedAt', 'claimedFromAddress']),
    );
  });
});

describe('credentials API documentation: leaked keys (decision 43)', () => {
  const report = document.paths['/secret-scanning/github']?.post;
  const leaked = document.paths['/leaked-keys']?.post;

  test('when the secret-scanning report is described, then it is public, names both signature headers and every answer', () => {
    expect(report?.security).toEqual([]);
    expect(report?.parameters?.map((parameter) => [parameter.in, parameter.name])).toEqual([
      ['header', 'Github-Public-Key-Identifier'],
      ['header', 'Github-Public-Key-Signature'],
    ]);
    expect(Object.keys(report?.responses ?? {})).toEqual(['200', '202', '400', '401', '405', '408', '413', '415', '431', '503']);
    expect(report?.responses['200']?.content).toMatchObject({
      'application/json': { schema: { $ref: '#/components/schemas/SecretScanningLabels' } },
    });
    expect(report?.responses['401']?.description).toContain('INVALID_SIGNATURE');
  });

  test('when the single-key report is described, then it is public and its 202 has no body, beside its 400, 413, 415 and 429', () => {
    expect(leaked?.security).toEqual([]);
    expect(Object.keys(leaked?.responses ?? {})).toEqual(['202', '400', '405', '408', '413', '415', '429', '431', '503']);
    expect(leaked?.responses['202']?.content).toBeUndefined();
  });
});

describe('credentials API documentation: offers to recipient accounts (decision 50)', () => {
  const operations: [string, string, Record<string, string>][] = [
    ['/portfolio/offers', 'get', { '200': 'page', '400': 'INVALID_PARAMETER', '401': 'INVALID_API_KEY', '429': 'Retry-After' }],
    [
      '/portfolio/offers/{clientId}/accept',
      'post',
      {
        '200': 'Accepted',
        '202': 'not yet in the event log',
        '400': 'VALIDATION_FAILED',
        '401': 'INVALID_API_KEY',
        '403': 'KEY_READ_ONLY',
        '404': 'OFFER_NOT_FOUND',
        '409': 'OFFER_NOT_PENDING',
      },
    ],
    [
      '/portfolio/offers/{clientId}/decline',
      'post',
      {
        '204': 'Declined',
        '202': 'event log',
        '400': 'VALIDATION_FAILED',
        '401': 'INVALID_API_KEY',
        '403': 'KEY_READ_ONLY',
        '404': 'OFFER_NOT_FOUND',
        '409': 'OFFER_NOT_PENDING',
      },
    ],
    ['/portfolio/auto-accept', 'get', { '200': 'list', '401': 'INVALID_API_KEY' }],
    ['/portfolio/auto-accept', 'put', { '200': 'list', '400': 'VALIDATION_FAILED', '401': 'INVALID_API_KEY', '413': 'PAYLOAD_TOO_LARGE' }],
  ];

  test.each(operations)('when %s (%s) is described, then it takes the account key and names each answer', (path, method, answers) => {
    const operation = document.paths[path]?.[method];

    expect(operation?.security).toEqual([{ apiKey: [] }]);
    for (const [status, mentioned] of Object.entries(answers)) {
      const response = operation?.responses[status];
      expect([status, `${response?.description ?? ''} ${JSON.stringify(response?.headers ?? {})}`]).toEqual([
        status,
        expect.stringContaining(mentioned),
      ]);
    }
  });

  test('when an authorization is described, then it may be pending, and revoked because its recipient declined it', () => {
    const schemas = document.components.schemas as Record<string, { enum?: string[] }>;

    expect(schemas.AuthorizationStatus?.enum).toContain('pending');
    expect(schemas.RevocationReason?.enum).toContain('declined_by_recipient');
    expect(Object.keys(document.components.schemas.PortfolioOffer?.properties ?? {}).sort()).toEqual(
      ['allowedCidrs', 'clientId', 'expiresAt', 'offeredAt', 'organizationId', 'recipientName', 'recipientType', 'scopes'].sort(),
    );
  });
});

describe('credentials API documentation: the audit trail (decision 54)', () => {
  test('when the audit trail is described, then its filters, its page, both exports and its refusals are there', () => {
    const auditLog = document.paths['/organizations/{organizationId}/audit-log']?.get;

    expect(Object.keys(auditLog?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '401', '403']));
    expect(Object.keys(auditLog?.responses['200']?.content ?? {})).toEqual(['application/json', 'text/csv', 'application/x-ndjson']);
    expect((auditLog?.parameters ?? []).map((parameter) => parameter.name)).toEqual([
      'organizationId',
      'from',
      'to',
      'actor',
      'action',
      'clientId',
      'limit',
      'cursor',
    ]);
    expect(Object.keys(document.components.schemas.AuditLogEntry?.properties ?? {}).sort()).toEqual([
      'action',
      'actor',
      'address',
      'at',
      'clientId',
      'requestId',
    ]);
  });
});

describe('credentials API documentation: access reviews (decision 54)', () => {
  const reviews = '/organizations/{organizationId}/access-reviews';

  test('when access reviews are described, then every operation is there with each refusal it answers', () => {
    expect(Object.keys(document.paths[reviews] ?? {})).toEqual(expect.arrayContaining(['post', 'get']));
    expect(Object.keys(document.paths[reviews]?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(['201', '400', '401', '403', '415']),
    );
    expect(Object.keys(document.paths[`${reviews}/{reviewId}`]?.get?.responses ?? {})).toEqual(expect.arrayContaining(['200', '404']));
    const decide = document.paths[`${reviews}/{reviewId}/items/{clientId}`]?.put;
    expect(Object.keys(decide?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '404', '409']));
    expect(JSON.stringify(decide?.responses['409'])).toContain('ACCESS_REVIEW_ITEM_DECIDED');
    expect(JSON.stringify(decide?.responses['409'])).toContain('ACCESS_REVIEW_COMPLETED');
    expect(JSON.stringify(decide?.responses['404'])).toContain('ACCESS_REVIEW_ITEM_NOT_FOUND');
  });

  test('when the report is described, then it answers the signed report as JSON and its lines as CSV, not NDJSON', () => {
    const report = document.paths[`${reviews}/{reviewId}/report`]?.get;

    expect(report?.responses['200']?.content).toMatchObject({
      'application/json': { schema: { $ref: '#/components/schemas/SignedAccessReviewReport' } },
      'text/csv': { schema: { type: 'string' } },
    });
    expect(report?.responses['200']?.content).not.toHaveProperty(['application/x-ndjson']);
    expect(Object.keys(document.components.schemas.AccessReviewReportLine?.properties ?? {})).toEqual(
      expect.arrayContaining(['lastUsedAt', 'readsInPeriod', 'decision', 'decidedBy', 'decidedAt']),
    );
  });
});
