import type { RequestHandler } from 'express';
import { ApiError } from '@rsd/platform';
import { CUSTOMER_RESOURCES } from '../customers/customer-resources';
import { requestContext } from './request-context';

/** Step 9 of the order of checks: the authorization must have granted the resource's scope. */
export const requireScope: RequestHandler = (_req, res, next) => {
  const { scope } = CUSTOMER_RESOURCES[requestContext.path(res).resource];
  if (!requestContext.credential(res).scopes.includes(scope)) {
    next(new ApiError('INSUFFICIENT_SCOPE', `This credential was not granted the ${scope} scope`));
    return;
  }
  next();
};
