import type { z } from 'zod';
import { createAuthorizationRequestSchema } from '@rsd/contracts';
import { createRequestProblems, resolveExpiresAt, validCreateRequest, type ValidCreateRequest } from '@rsd/domain';
import { issueDetails, requestErrorMap, validationFailed } from '@rsd/platform';

/** `expiresAt` is the one union in the body; zod's "Invalid input" would not tell a client what to send. */
const errorMap: z.core.$ZodErrorMap = (issue) =>
  issue.code === 'invalid_union' && issue.path?.[0] === 'expiresAt'
    ? 'must be a date YYYY-MM-DD or an ISO 8601 date-time with an offset, e.g. 2026-12-31T23:59:59Z'
    : requestErrorMap(issue);

/** Every problem at once, the schema's and the rules' (an expiry in the past among them), so a client fixes its request in one go. */
export function validateCreateRequest(body: unknown, now: Date): ValidCreateRequest {
  const parsed = createAuthorizationRequestSchema.safeParse(body, { error: errorMap });
  const expiresAt = expiresAtOf(body);
  const details = [...(parsed.success ? [] : issueDetails(parsed.error.issues)), ...createRequestProblems(parsed.data, expiresAt, now)];
  if (!parsed.success || details.length > 0) throw validationFailed(details);
  return validCreateRequest(parsed.data, expiresAt);
}

/** The expiry, when the body holds a well-formed one, whatever else is wrong with the body. */
function expiresAtOf(body: unknown): Date | undefined {
  if (typeof body !== 'object' || body === null || !('expiresAt' in body)) return undefined;
  const parsed = createAuthorizationRequestSchema.shape.expiresAt.safeParse(body.expiresAt);
  return parsed.success && parsed.data !== undefined ? resolveExpiresAt(parsed.data) : undefined;
}
