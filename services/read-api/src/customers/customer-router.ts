import { Router } from 'express';
import type { Logger } from '@rsd/platform';
import type { Clock, RateLimitStoreFactory, ReadViews } from '@rsd/ports';
import { authenticateCredential } from '../access/authenticate-credential';
import { requireClientId } from '../access/client-id';
import { credentialRateLimit, failedAuthenticationLimit, type RateLimitDeps } from '../access/rate-limits';
import { requireScope } from '../access/require-scope';
import type { ReadApiConfig } from '../config';
import { resolveCustomerPath } from './resolve-customer-path';
import { serveCustomerResource } from './score-routes';

export interface CustomerRouterDeps {
  config: ReadApiConfig;
  views: ReadViews;
  rateLimitStores: RateLimitStoreFactory;
  clock: Clock;
  log: Logger;
  onRateLimited?: RateLimitDeps['onRejected'];
}

/**
 * `/v1/customers/{clientId}/score | pillars | score/history`: the order of checks after the edge
 * policy, one step per middleware; the first failure goes to the error middleware.
 */
export function customerRouter({ config, views, rateLimitStores, clock, log, onRateLimited }: CustomerRouterDeps): Router {
  const router = Router();
  router.use(
    resolveCustomerPath,
    requireClientId(config.CLIENT_ID_PREFIX),
    authenticateCredential({ credentials: views.credentials, clock, apiKeyPrefix: config.API_KEY_PREFIX }),
    credentialRateLimit({ stores: rateLimitStores, limitPerMinute: config.RATE_LIMIT_PER_MINUTE, log, onRejected: onRateLimited }),
    requireScope,
    serveCustomerResource(views.scores),
  );
  router.use(
    failedAuthenticationLimit({
      stores: rateLimitStores,
      limitPerMinute: config.FAILED_AUTH_LIMIT_PER_MINUTE,
      log,
      onRejected: onRateLimited,
    }),
  );
  return router;
}
