import type { Request } from 'express';
import { isoDateSchema } from '@rsd/contracts';
import { ApiError, singleQueryParameter } from '@rsd/platform';

/**
 * Decision 55's `asOf`: a calendar date `YYYY-MM-DD`, today (UTC) when omitted. A date after today
 * (UTC) is refused: a certificate speaks only for a day that has begun, so the same request never
 * answers one thing today and another tomorrow for the same date.
 */
export function asOfOf(req: Request, now: Date): string {
  const today = now.toISOString().slice(0, 10);
  const raw = singleQueryParameter(req, 'asOf');
  if (raw === undefined) return today;
  if (!isoDateSchema.safeParse(raw).success) throw new ApiError('INVALID_PARAMETER', 'asOf must be a calendar date YYYY-MM-DD');
  if (raw > today) throw new ApiError('INVALID_PARAMETER', `asOf must not be after today (${today}, UTC)`);
  return raw;
}
