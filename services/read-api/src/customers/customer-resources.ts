import type { AccessResource, Scope } from '@rsd/contracts';

/** The customer resources, the path below `/v1/customers/{clientId}` of each, the scope it needs, and its name in the access log. */
export const CUSTOMER_RESOURCES = {
  score: { path: 'score', scope: 'qr_score', access: 'score' },
  pillars: { path: 'pillars', scope: 'pillar_breakdown', access: 'pillars' },
  scoreHistory: { path: 'score/history', scope: 'score_trend', access: 'history' },
  // Decision 55: the score as it stood on a date, signed; pillars in it only with pillar_breakdown.
  certificate: { path: 'certificate', scope: 'qr_score', access: 'certificate' },
} as const satisfies Record<string, { path: string; scope: Scope; access: AccessResource }>;

export type CustomerResource = keyof typeof CUSTOMER_RESOURCES;

export const CUSTOMER_METHODS = ['GET', 'HEAD'] as const;

export interface CustomerPath {
  resource: CustomerResource;
  /** The Client ID segment as it arrived, still percent-encoded; undefined when the path has none. */
  rawClientId: string | undefined;
}

const byPath = new Map<string, CustomerResource>(
  Object.entries(CUSTOMER_RESOURCES).map(([resource, { path }]) => [path, resource as CustomerResource]),
);

/** Where the customer resources are: regardless of case, as express matches the path it mounts a handler at. */
const CUSTOMERS = '/v1/customers'.replace(/[a-z]/g, (letter) => `[${letter}${letter.toUpperCase()}]`);

/** `/v1/customers/{clientId}/{resource path}`, the Client ID segment optional, one trailing slash allowed (the paths are plain words). */
const CUSTOMER_PATH = new RegExp(`^${CUSTOMERS}/(?:([^/]*)/)?(${[...byPath.keys()].join('|')})/?$`);

/**
 * Matches a request's path by hand rather than with a route parameter: express would skip an empty
 * segment (`//score`) and answer a malformed percent-encoding with its own error, where the contract
 * wants MISSING_CLIENT_ID and INVALID_CLIENT_ID. A path that is itself a resource path
 * (`/v1/customers/score`) has no Client ID segment at all. One regular expression on the whole path,
 * not a mount at `/v1/customers`: mounting costs every read express's rewriting of the URL and a second
 * parse of it, and this runs on every read.
 */
export function matchCustomerPath(path: string): CustomerPath | undefined {
  const match = CUSTOMER_PATH.exec(path);
  if (!match) return undefined;
  return { resource: byPath.get(match[2] as string) as CustomerResource, rawClientId: match[1] };
}
