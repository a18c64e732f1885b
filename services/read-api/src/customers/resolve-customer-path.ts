import type { RequestHandler } from 'express';
import { methodNotAllowed } from '@rsd/platform';
import { requestContext } from '../access/request-context';
import { CUSTOMER_METHODS, CUSTOMER_RESOURCES, matchCustomerPath } from './customer-resources';

const rejectMethod = methodNotAllowed(CUSTOMER_METHODS);

/**
 * Routing, before the order of checks: a path that is no customer resource leaves the router (and
 * ends as ROUTE_NOT_FOUND); another method than GET or HEAD on one answers 405 with `Allow`.
 */
export const resolveCustomerPath: RequestHandler = (req, res, next) => {
  const path = matchCustomerPath(req.path);
  if (!path) {
    next('router');
    return;
  }
  // The metrics label is the template: a raw path would put every Client ID into a time series.
  res.locals.metricsRoute = `/v1/customers/:clientId/${CUSTOMER_RESOURCES[path.resource].path}`;
  // Customer data and the errors about it are per caller: no shared cache may keep them.
  res.setHeader('Cache-Control', 'no-store');
  if (!(CUSTOMER_METHODS as readonly string[]).includes(req.method)) {
    rejectMethod(req, res, next);
    return;
  }
  requestContext.setPath(res, path);
  next();
};
