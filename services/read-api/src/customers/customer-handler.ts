import type { RequestHandler } from 'express';
import { isoInstants, methodNotAllowed, serviceUnavailable, type Logger } from '@rsd/platform';
import type { Clock, FeedStaleness, RateLimitStoreFactory, ViewStore } from '@rsd/ports';
import { recipientAuthenticator, type RateLimitDeps } from '@rsd/recipient-access';
import type { ReadApiConfig } from '../config';
import { CUSTOMER_METHODS, CUSTOMER_RESOURCES, matchCustomerPath } from './customer-resources';
import { resourceServers } from './serve-resource';
import { representationSender } from './send-representation';
import { createResponseSigner, type ResponseSigner } from '../signing/response-signer';
import type { SigningKeys } from '../signing/signing-keys';
import { accessRecordIds, recordOnFinish, type RecordAccess } from '../access-log/record-on-finish';

export interface CustomerHandlerDeps {
  config: ReadApiConfig;
  views: ViewStore;
  /** Absent: the views are in this process and never behind the log. */
  staleness?: FeedStaleness;
  /** Signs every 200 from a customer resource; all of them are published at /.well-known/jwks.json. */
  signingKeys: SigningKeys;
  /**
   * Default: the active key's signer, reusing an unchanged representation's signature for
   * RESPONSE_SIGNATURE_REUSE_S. Only `npm run bench` gives another: its unsigned baseline.
   */
  responseSigner?: ResponseSigner;
  rateLimitStores: RateLimitStoreFactory;
  clock: Clock;
  log: Logger;
  onRateLimited?: RateLimitDeps['onRejected'];
  /**
   * Decision 21: the access recorder's intake, given the access record of every request whose
   * credential was found; absent (ACCESS_LOG_ENABLED=false, or a test), nothing is recorded.
   */
  recordAccess?: RecordAccess;
}

/**
 * `/v1/customers/{clientId}/score | pillars | score/history`, the order of checks of decision 6 after
 * the edge policy, read top to bottom: resolve the path, refuse while the views may be stale, let
 * the recipient in (steps 2–9 and the allow list, shared with the notifier: @rsd/recipient-access),
 * serve (10).
 */
export function customerHandler({
  config,
  views,
  staleness,
  signingKeys,
  responseSigner = createResponseSigner(signingKeys, { reuseSeconds: config.RESPONSE_SIGNATURE_REUSE_S }),
  rateLimitStores,
  clock,
  log,
  onRateLimited,
  recordAccess,
}: CustomerHandlerDeps): RequestHandler {
  const authenticate = recipientAuthenticator({ config, views, rateLimitStores, clock, log, onRateLimited });
  const serve = resourceServers(views, representationSender(responseSigner, clock));
  const rejectMethod = methodNotAllowed(CUSTOMER_METHODS);
  const recording = recordAccess && { record: recordAccess, clock, nextId: accessRecordIds(), isoOf: isoInstants() };

  return async (req, res, next) => {
    const path = matchCustomerPath(req.path);
    if (!path) {
      next();
      return;
    }
    const { scope, path: template } = CUSTOMER_RESOURCES[path.resource];
    // The metrics label is the template: a raw path would put every Client ID into a time series.
    res.locals.metricsRoute = `/v1/customers/:clientId/${template}`;
    // Customer data and the errors about it are per caller: no shared cache may keep them.
    res.setHeader('Cache-Control', 'no-store');
    if (!(CUSTOMER_METHODS as readonly string[]).includes(req.method)) {
      rejectMethod(req, res, next);
      return;
    }

    // Before any lookup: an answer from a copy that may have missed a revocation is no answer (decision 29).
    if (staleness?.isStale(clock.now())) {
      throw serviceUnavailable('This replica has lost touch with the event log, so its data may be out of date; retry shortly', {
        retryAfterS: STALE_RETRY_AFTER_S,
      });
    }

    const recipient = await authenticate(req, res, {
      rawClientId: path.rawClientId,
      scope,
      onCredentialFound: recording
        ? (clientId, clientAddress) => recordOnFinish(res, { clientId, resource: path.resource, clientAddress }, recording)
        : undefined,
    });
    const { clientId } = recipient;
    const { organizationId, scopes } = recipient.credential;
    await serve[path.resource](req, res, { clientId, organizationId, scopes });
  };
}

/** The staleness probe reads the log every second: a replica back in touch serves again within a few. */
const STALE_RETRY_AFTER_S = 5;
