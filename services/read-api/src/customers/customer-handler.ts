import type { RequestHandler } from 'express';
import { methodNotAllowed } from '@rsd/platform';
import { CUSTOMER_METHODS, CUSTOMER_RESOURCES, matchCustomerPath } from './customer-resources';
import { resourceServers } from './serve-resource';
import type { ReadPipeline } from '../pipeline/read-pipeline';

/**
 * `/v1/customers/{clientId}/score | pillars | score/history | certificate`, the order of checks of
 * decision 6 after the edge policy, read top to bottom: resolve the path, then the read pipeline
 * (refuse while the views may be stale, let the recipient in: steps 2–9 and the allow list, shared
 * with the notifier through @rsd/recipient-access), serve (10).
 */
export function customerHandler(pipeline: ReadPipeline): RequestHandler {
  const serve = resourceServers(pipeline);
  const rejectMethod = methodNotAllowed(CUSTOMER_METHODS);

  return async (req, res, next) => {
    const path = matchCustomerPath(req.path);
    if (!path) {
      next();
      return;
    }
    const { scope, access, path: template } = CUSTOMER_RESOURCES[path.resource];
    pipeline.label(res, `/v1/customers/:clientId/${template}`);
    if (!(CUSTOMER_METHODS as readonly string[]).includes(req.method)) {
      rejectMethod(req, res, next);
      return;
    }
    const reader = await pipeline.grant(req, res, { rawClientId: path.rawClientId, scope, access });
    await serve[path.resource](req, res, reader);
  };
}
