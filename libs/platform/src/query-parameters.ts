import type { Request } from 'express';
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
