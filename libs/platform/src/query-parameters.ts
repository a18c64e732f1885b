import type { Request } from 'express';
import { instantInputSchema } from '@rsd/contracts';
import { ApiError } from './errors';

/** A repeated parameter arrives as an array: it is refused rather than guessed at. */
export function singleQueryParameter(req: Request, name: string): string | undefined {
  const raw: unknown = req.query[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw new ApiError('INVALID_PARAMETER', `${name} must be given once`);
  return raw;
}

/** A page's `limit`: a whole number in the range, written plainly (no sign, no leading zero, no exponent). */
export function pageLimitOf(req: Request, range: { min: number; max: number; default: number }): number {
  const raw = singleQueryParameter(req, 'limit');
  if (raw === undefined) return range.default;
  const limit = /^[1-9][0-9]*$/.test(raw) ? Number(raw) : NaN;
  if (!(limit >= range.min && limit <= range.max)) {
    throw new ApiError('INVALID_PARAMETER', `limit must be a whole number from ${range.min} to ${range.max}`);
  }
  return limit;
}

/** An instant parameter with an offset, given back in UTC with milliseconds (as entries' `at` are). */
export function instantParameter(req: Request, name: string): string | undefined {
  const raw = singleQueryParameter(req, name);
  if (raw === undefined) return undefined;
  if (!instantInputSchema.safeParse(raw).success) {
    throw new ApiError('INVALID_PARAMETER', `${name} must be an ISO 8601 instant with an offset, such as 2026-11-21T08:00:00Z`);
  }
  return new Date(raw).toISOString();
}

/** `from` and `to`, instants as `instantParameter` reads them, `from` before `to` when both are given. */
export function instantRangeOf(req: Request): { from?: string; to?: string } {
  const from = instantParameter(req, 'from');
  const to = instantParameter(req, 'to');
  if (from !== undefined && to !== undefined && from >= to) throw new ApiError('INVALID_PARAMETER', 'from must be before to');
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}

/** A parameter the schema parses (one of a list, an id of a shape); anything else is INVALID_PARAMETER with `message`. */
export function parsedParameter<T>(
  req: Request,
  name: string,
  schema: { safeParse(value: unknown): { success: boolean; data?: T } },
  message = `${name} is not one this API knows`,
): T | undefined {
  const raw = singleQueryParameter(req, name);
  if (raw === undefined) return undefined;
  const parsed = schema.safeParse(raw);
  if (!parsed.success || parsed.data === undefined) throw new ApiError('INVALID_PARAMETER', message);
  return parsed.data;
}
