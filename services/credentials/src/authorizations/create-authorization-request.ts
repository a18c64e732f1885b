import type { z } from 'zod';
import { CLAIM_VALID_SECONDS, createAuthorizationRequestSchema, type KeyDelivery, type RecipientType, type Scope } from '@rsd/contracts';
import { parseAddressRange } from '@rsd/domain';
import { issueDetails, requestErrorMap, validationFailed } from '@rsd/platform';

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

const DAY_MS = 24 * 60 * 60 * 1000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** `expiresAt` is the one union in the body; zod's "Invalid input" would not tell a client what to send. */
const errorMap: z.core.$ZodErrorMap = (issue) =>
  issue.code === 'invalid_union' && issue.path?.[0] === 'expiresAt'
    ? 'must be a date YYYY-MM-DD or an ISO 8601 date-time with an offset, e.g. 2026-12-31T23:59:59Z'
    : requestErrorMap(issue);

/**
 * A date means "valid through the end of that UTC day", so it is stored as the next day's midnight,
 * the first instant it no longer works. A date-time is normalised to UTC.
 */
export function resolveExpiresAt(input: string): Date {
  if (DATE_ONLY.test(input)) return new Date(Date.parse(`${input}T00:00:00.000Z`) + DAY_MS);
  return new Date(input);
}

/** Every problem at once, including an expiry in the past, so a client fixes its request in one go. */
export function validateCreateRequest(body: unknown, now: Date): ValidCreateRequest {
  const parsed = createAuthorizationRequestSchema.safeParse(body, { error: errorMap });
  const details = parsed.success ? [] : issueDetails(parsed.error.issues);
  const expiresAt = expiresAtOf(body);
  if (expiresAt && expiresAt.getTime() <= now.getTime()) {
    details.push({ path: 'expiresAt', message: 'must be in the future' });
  }
  if (parsed.success) details.push(...addressProblems(parsed.data.allowedCidrs));
  if (parsed.success && parsed.data.claimValidSeconds !== undefined && parsed.data.keyDelivery !== 'claimLink') {
    details.push({ path: 'claimValidSeconds', message: 'applies only with keyDelivery "claimLink"' });
  }
  if (parsed.success && parsed.data.keyDelivery === 'account' && parsed.data.recipientAccountId === undefined) {
    details.push({ path: 'recipientAccountId', message: 'is required with keyDelivery "account"' });
  }
  if (parsed.success && parsed.data.recipientAccountId !== undefined && parsed.data.keyDelivery !== 'account') {
    details.push({ path: 'recipientAccountId', message: 'applies only with keyDelivery "account"' });
  }
  if (!parsed.success || details.length > 0) throw validationFailed(details);
  return {
    recipientType: parsed.data.recipientType,
    recipientName: parsed.data.recipientName ?? null,
    scopes: parsed.data.scopes,
    expiresAt: expiresAt ? expiresAt.toISOString() : null,
    allowedCidrs: parsed.data.allowedCidrs ?? null,
    keyDelivery: parsed.data.keyDelivery ?? 'response',
    claimValidSeconds: parsed.data.claimValidSeconds ?? CLAIM_VALID_SECONDS.default,
    recipientAccountId: parsed.data.recipientAccountId ?? null,
  };
}

/** Decision 22: the same parser the read API applies, so whatever is accepted here is what it enforces. */
function addressProblems(allowedCidrs: readonly string[] | undefined): { path: string; message: string }[] {
  return (allowedCidrs ?? []).flatMap((entry, index) =>
    parseAddressRange(entry)
      ? []
      : [{ path: `allowedCidrs.${index}`, message: 'must be an IPv4 or IPv6 address or CIDR range, e.g. 203.0.113.0/24' }],
  );
}

/** The expiry, when the body holds a well-formed one, whatever else is wrong with the body. */
function expiresAtOf(body: unknown): Date | undefined {
  if (typeof body !== 'object' || body === null || !('expiresAt' in body)) return undefined;
  const parsed = createAuthorizationRequestSchema.shape.expiresAt.safeParse(body.expiresAt);
  return parsed.success && parsed.data !== undefined ? resolveExpiresAt(parsed.data) : undefined;
}
