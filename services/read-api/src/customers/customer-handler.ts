import type { RequestHandler } from 'express';
import { clientIdPattern } from '@rsd/contracts';
import {
  addressAllowed,
  checkAccess,
  credentialView,
  identifyCaller,
  type AuthenticationRefusal,
  type CredentialFormatRules,
} from '@rsd/domain';
import { ApiError, methodNotAllowed, type Logger } from '@rsd/platform';
import type { Clock, RateLimitStoreFactory, ViewStore } from '@rsd/ports';
import { credentialRateLimit, failedAuthenticationLimit, type RateLimitDeps } from '../access/rate-limits';
import type { ReadApiConfig } from '../config';
import { NEVER_STALE, type FeedStaleness } from '../views/feed-staleness';
import { CUSTOMER_METHODS, CUSTOMER_RESOURCES, matchCustomerPath } from './customer-resources';
import { resourceServers } from './serve-resource';
import { representationSender } from './send-representation';
import { createResponseSigner } from '../signing/response-signer';
import type { SigningKeys } from '../signing/signing-keys';
import { accessRecordIds, recordOnFinish, type RecordAccess } from '../access-log/record-on-finish';

export interface CustomerHandlerDeps {
  config: ReadApiConfig;
  views: ViewStore;
  staleness?: FeedStaleness;
  signingKeys: SigningKeys;
  rateLimitStores: RateLimitStoreFactory;
  clock: Clock;
  log: Logger;
  onRateLimited?: RateLimitDeps['onRejected'];
  /** Decision 21: takes the access record of every request whose credential was found; absent, nothing is recorded. */
  recordAccess?: RecordAccess;
}

/**
 * `/v1/customers/{clientId}/score | pillars | score/history`, the order of checks of decision 6 after
 * the edge policy, read top to bottom: resolve the path, identify the caller (steps 2–4), one lookup,
 * check access (5–7), the allow list (decision 22), the credential's rate limit (8), the scope (9), serve (10). Failures of steps
 * 2–7 pass the per-address limiter first, so nobody can guess keys fast.
 */
export function customerHandler({
  config,
  views,
  staleness = NEVER_STALE,
  signingKeys,
  rateLimitStores,
  clock,
  log,
  onRateLimited,
  recordAccess,
}: CustomerHandlerDeps): RequestHandler {
  const rules: CredentialFormatRules = { clientIdPattern: clientIdPattern(config.CLIENT_ID_PREFIX), apiKeyPrefix: config.API_KEY_PREFIX };
  const limitCredential = credentialRateLimit({
    stores: rateLimitStores,
    limitPerMinute: config.RATE_LIMIT_PER_MINUTE,
    log,
    onRejected: onRateLimited,
  });
  const limitFailures = failedAuthenticationLimit({
    stores: rateLimitStores,
    limitPerMinute: config.FAILED_AUTH_LIMIT_PER_MINUTE,
    log,
    onRejected: onRateLimited,
  });
  const serve = resourceServers(
    views,
    representationSender(createResponseSigner(signingKeys, { reuseSeconds: config.RESPONSE_SIGNATURE_REUSE_S }), clock),
  );
  const rejectMethod = methodNotAllowed(CUSTOMER_METHODS);
  const recording = recordAccess && { record: recordAccess, clock, nextId: accessRecordIds() };
  const refusalMessages = refusalMessagesFor(config.CLIENT_ID_PREFIX);

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
    if (staleness.isStale(clock.now())) {
      res.setHeader('Retry-After', String(STALE_RETRY_AFTER_S));
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        'This replica has lost touch with the event log, so its data may be out of date; retry shortly',
      );
    }

    const refuse = async (code: AuthenticationRefusal): Promise<void> => {
      if (await limitFailures(req, res)) throw new ApiError(code, refusalMessages[code]);
    };

    const identified = identifyCaller({ clientId: percentDecoded(path.rawClientId), apiKey: apiKeyOf(req.headers['x-api-key']) }, rules);
    if (identified.outcome === 'refused') return refuse(identified.code);
    const { clientId } = identified.caller;

    const credential = await views.get(credentialView, clientId);
    // The address as the read API determines it (TRUST_PROXY_HOPS included), worked out once for the allow list and the access log.
    const clientAddress = req.ip;
    if (credential && recording) recordOnFinish(res, { clientId, resource: path.resource, clientAddress }, recording);
    const access = checkAccess(identified.caller, credential, scope, clock.now(), rules);
    if (access.outcome === 'refused') return refuse(access.code);
    // Decision 22, between steps 7 and 8.
    if (!addressAllowed(access.credential.allowedCidrs, clientAddress)) {
      throw new ApiError('ADDRESS_NOT_ALLOWED', 'This credential may not be used from this client address');
    }
    if (!(await limitCredential(req, res, clientId))) return;
    if (access.outcome === 'forbidden') throw new ApiError(access.code, `This credential was not granted the ${scope} scope`);

    const { organizationId, scopes } = access.credential;
    await serve[path.resource](req, res, { clientId, organizationId, scopes });
  };
}

/** The staleness probe reads the log every second: a replica back in touch serves again within a few. */
const STALE_RETRY_AFTER_S = 5;

function refusalMessagesFor(prefix: string): Record<AuthenticationRefusal, string> {
  return {
    MISSING_CLIENT_ID: 'The path has no Client ID: use /v1/customers/{clientId}/...',
    INVALID_CLIENT_ID: `The Client ID is not in the expected format ${prefix}_<16-64 letters or digits>`,
    MISSING_API_KEY: 'The x-api-key header is required',
    CREDENTIAL_NOT_FOUND: 'No credential exists for this Client ID',
    INVALID_API_KEY: 'The API key is not valid for this Client ID',
    CREDENTIAL_INACTIVE: 'The credential has been revoked, has expired or is not active',
  };
}

/**
 * The segment gets standard percent-decoding and nothing else: no trimming, no case folding.
 * undefined when the path has no segment; null for a malformed escape or bytes that are not UTF-8
 * (`%FF`), which is INVALID_CLIENT_ID.
 */
function percentDecoded(segment: string | undefined): string | undefined | null {
  if (segment === undefined) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** Node joins a repeated header with ", ", so two keys arrive as one value that cannot verify. */
function apiKeyOf(header: string | string[] | undefined): string {
  return Array.isArray(header) ? header.join(', ') : (header ?? '');
}
