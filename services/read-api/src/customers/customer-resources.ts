import type { Scope } from '@rsd/contracts';

/** The customer resources, the path below `/v1/customers/{clientId}` of each, and the scope it needs. */
export const CUSTOMER_RESOURCES = {
  score: { path: 'score', scope: 'qr_score' },
  pillars: { path: 'pillars', scope: 'pillar_breakdown' },
  scoreHistory: { path: 'score/history', scope: 'score_trend' },
} as const satisfies Record<string, { path: string; scope: Scope }>;

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

/**
 * Matches a path below `/v1/customers` by hand rather than with a route parameter: express would
 * skip an empty segment (`//score`) and answer a malformed percent-encoding with its own error,
 * where the contract wants MISSING_CLIENT_ID and INVALID_CLIENT_ID.
 */
export function matchCustomerPath(path: string): CustomerPath | undefined {
  const trimmed = path.endsWith('/') && path.length > 1 ? path.slice(0, -1) : path;
  if (!trimmed.startsWith('/')) return undefined;
  const segments = trimmed.slice(1).split('/');
  // A path that is itself a resource path has no Client ID segment at all.
  const withoutId = byPath.get(segments.join('/'));
  if (withoutId) return { resource: withoutId, rawClientId: undefined };
  const [rawClientId, ...rest] = segments;
  const resource = byPath.get(rest.join('/'));
  return resource && rawClientId !== undefined ? { resource, rawClientId } : undefined;
}
