import type { Response } from 'express';
import { errorBody } from '@rsd/platform';

/**
 * The edge policy's 403 and the 429s carry no `code`, so they cannot be an ApiError; they are
 * written here, in the same body shape the error middleware writes.
 */
export function sendErrorWithoutCode(res: Response, status: 403 | 429, message: string): void {
  // createBaseApp has put the request id on the response already.
  const requestId = res.getHeader('x-request-id');
  res.status(status).json(errorBody(status, undefined, message, { requestId: typeof requestId === 'string' ? requestId : undefined }));
}
