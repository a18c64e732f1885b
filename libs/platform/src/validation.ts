import type { z } from 'zod';
import { ApiError, type ErrorDetail } from './errors';

const MISSING_VALUE_CODES: ReadonlySet<string> = new Set(['invalid_type', 'invalid_value', 'invalid_union']);

/** Clearer wording for a missing field; every other problem keeps zod's own message. */
export const requestErrorMap: z.core.$ZodErrorMap = (issue) =>
  issue.input === undefined && MISSING_VALUE_CODES.has(issue.code ?? '') ? 'is required' : undefined;

/** Dotted path from the body's root (`scores.3.grade`); the empty string is the body itself. */
export function pathOf(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

/** One detail per problem, and one per unknown field, so a client can fix everything in one go. */
export function issueDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: pathOf([...issue.path, key]), message: 'is not a known field' }))
      : [{ path: pathOf(issue.path), message: issue.message }],
  );
}

export function validationFailed(details: ErrorDetail[], message = 'The request body is invalid'): ApiError {
  return new ApiError('VALIDATION_FAILED', message, details);
}

/** The body as the schema reads it, or VALIDATION_FAILED with one detail per problem (and `message` when given). */
export function parsedBody<T>(schema: z.ZodType<T>, body: unknown, message?: string): T {
  const parsed = schema.safeParse(body, { error: requestErrorMap });
  if (!parsed.success) throw validationFailed(issueDetails(parsed.error.issues), message);
  return parsed.data;
}

/** JSON text as the schema reads it; undefined when it is not JSON, or not of the schema (a record anyone could have written). */
export function parsedJson<T>(text: string, schema: z.ZodType<T>): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
