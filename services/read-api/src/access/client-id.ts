import type { RequestHandler } from 'express';
import { clientIdPattern } from '@rsd/contracts';
import { ApiError } from '@rsd/platform';
import { requestContext } from './request-context';

/**
 * Steps 2 and 3 of the order of checks. The segment gets standard percent-decoding and nothing
 * else: no trimming, no case folding. Anything that does not decode, or decodes to something that
 * is not a Client ID (an encoded slash, a trailing space, the wrong prefix), is INVALID_CLIENT_ID,
 * and no lookup happens.
 */
export function requireClientId(prefix: string): RequestHandler {
  const pattern = clientIdPattern(prefix);
  return (_req, res, next) => {
    const { rawClientId } = requestContext.path(res);
    const decoded = rawClientId === undefined ? undefined : percentDecode(rawClientId);
    if (rawClientId === undefined || decoded?.trim() === '') {
      next(new ApiError('MISSING_CLIENT_ID', 'The path has no Client ID: use /v1/customers/{clientId}/...'));
      return;
    }
    if (decoded === undefined || !pattern.test(decoded)) {
      next(new ApiError('INVALID_CLIENT_ID', `The Client ID is not in the expected format ${prefix}_<16-64 letters or digits>`));
      return;
    }
    requestContext.setClientId(res, decoded);
    next();
  };
}

/** undefined for a malformed escape or bytes that are not UTF-8 (`%FF`). */
function percentDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
