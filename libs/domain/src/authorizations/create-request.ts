import { CLAIM_VALID_SECONDS, type CreateAuthorizationRequest, type KeyDelivery, type RecipientType, type Scope } from '@rsd/contracts';
import { parseAddressRange } from '../access/address-ranges';

/** A create request that keeps every rule: what the credentials service makes a grant of. */
export interface ValidCreateRequest {
  recipientType: RecipientType;
  recipientName: string | null;
  scopes: Scope[];
  /** UTC, milliseconds, `Z`: the first instant at which the credential no longer works. */
  expiresAt: string | null;
  /** As given, each one checked; null when the body has none. */
  allowedCidrs: string[] | null;
  /** Decision 38. */
  keyDelivery: KeyDelivery;
  claimValidSeconds: number;
  /** Decision 42: with `keyDelivery: "account"` only. */
  recipientAccountId: string | null;
}

/** One field's problem, by its path in the body. */
export interface FieldProblem {
  path: string;
  message: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A date means "valid through the end of that UTC day", so it is stored as the next day's midnight,
 * the first instant it no longer works. A date-time is normalised to UTC.
 */
export function resolveExpiresAt(input: string): Date {
  if (DATE_ONLY.test(input)) return new Date(Date.parse(`${input}T00:00:00.000Z`) + DAY_MS);
  return new Date(input);
}

/**
 * The rules a create request keeps beyond its schema, every one at once so a client fixes its
 * request in one go: an expiry in the future (`expiresAt`, the resolved one whenever the body holds a
 * well-formed one, whatever else is wrong with it), and, for a body that met its schema (`request`),
 * address ranges the read API can enforce and the key delivery's own fields.
 */
export function createRequestProblems(
  request: CreateAuthorizationRequest | undefined,
  expiresAt: Date | undefined,
  now: Date,
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (expiresAt && expiresAt.getTime() <= now.getTime()) problems.push({ path: 'expiresAt', message: 'must be in the future' });
  if (!request) return problems;
  problems.push(...addressProblems(request.allowedCidrs));
  if (request.claimValidSeconds !== undefined && request.keyDelivery !== 'claimLink') {
    problems.push({ path: 'claimValidSeconds', message: 'applies only with keyDelivery "claimLink"' });
  }
  if (request.keyDelivery === 'account' && request.recipientAccountId === undefined) {
    problems.push({ path: 'recipientAccountId', message: 'is required with keyDelivery "account"' });
  }
  if (request.recipientAccountId !== undefined && request.keyDelivery !== 'account') {
    problems.push({ path: 'recipientAccountId', message: 'applies only with keyDelivery "account"' });
  }
  return problems;
}

/** A request with no problems, its defaults filled in. */
export function validCreateRequest(request: CreateAuthorizationRequest, expiresAt: Date | undefined): ValidCreateRequest {
  return {
    recipientType: request.recipientType,
    recipientName: request.recipientName ?? null,
    scopes: request.scopes,
    expiresAt: expiresAt ? expiresAt.toISOString() : null,
    allowedCidrs: request.allowedCidrs ?? null,
    keyDelivery: request.keyDelivery ?? 'response',
    claimValidSeconds: request.claimValidSeconds ?? CLAIM_VALID_SECONDS.default,
    recipientAccountId: request.recipientAccountId ?? null,
  };
}

/** Decision 22: the same parser the read API applies, so whatever is accepted here is what it enforces. */
function addressProblems(allowedCidrs: readonly string[] | undefined): FieldProblem[] {
  return (allowedCidrs ?? []).flatMap((entry, index) =>
    parseAddressRange(entry)
      ? []
      : [{ path: `allowedCidrs.${index}`, message: 'must be an IPv4 or IPv6 address or CIDR range, e.g. 203.0.113.0/24' }],
  );
}
