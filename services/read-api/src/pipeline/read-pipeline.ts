import type { Request, Response } from 'express';
import type { AccessResource, Scope } from '@rsd/contracts';
import type { CredentialView } from '@rsd/domain';
import { isoInstants, serviceUnavailable, type Logger } from '@rsd/platform';
import type { Clock, FeedStaleness, RateLimitStoreFactory, ViewStore } from '@rsd/ports';
import { accountAuthenticator, recipientAuthenticator, type RateLimitDeps } from '@rsd/recipient-access';
import type { ReadApiConfig } from '../config';
import { accessRecordIds, recordOnFinish, type RecordAccess, type RecordingDeps } from '../access-log/record-on-finish';
import { bytesSender, representationSender, type MadeOf } from '../customers/send-representation';
import { createResponseSigner, type ResponseSigner } from '../signing/response-signer';
import type { SigningKeys } from '@rsd/platform';
import type { PortfolioReader } from '../portfolio/portfolio-pages';

export interface ReadPipelineDeps {
  config: ReadApiConfig;
  views: ViewStore;
  /** Absent: the views are in this process and never behind the log. */
  staleness?: FeedStaleness;
  /** Sign every 200 (and every certificate); all of them are published at /.well-known/jwks.json. */
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

/** Who reads one grant's data: the Client ID as called (every response echoes it), its credential, and what it may see. */
export interface Reader {
  clientId: string;
  organizationId: string;
  scopes: readonly Scope[];
  credential: CredentialView;
}

/**
 * Sends a resource with its ETag and signature, or a 304 (send-representation.ts); `madeOf` names what
 * alone it was made of; `once`, that it was issued for this request alone.
 */
export type Send = (req: Request, res: Response, resource: unknown, madeOf?: MadeOf, options?: { once?: boolean }) => void;

/** Which grant resource a request reads: the Client ID segment as it arrived, the scope it needs, and its name in the access log. */
export interface GrantRead {
  rawClientId: string | undefined;
  scope: Scope;
  access: AccessResource;
}

/**
 * The one way the read API answers a read, whoever reads (a grant's key, an account's key for one of
 * its grants, an account for a page of them) and whatever is read (a score, a history page, a
 * certificate, a portfolio page), in this order:
 *
 * 1. `label`: the metrics route (a template: a raw path would put every Client ID in a time
 *    series), and `Cache-Control: no-store` (the data and its errors are per caller);
 * 2. the stale check: an answer from a copy that may have missed a revocation is no answer (decision 29);
 * 3. authenticate and authorize: the key, the credential, the allow list (decision 22), the rate
 *    limit and the scope (decision 6's steps 2–9; @rsd/recipient-access), and from then on the
 *    access record of every grant read, whatever the answer (decision 21);
 * 4. the caller's handler loads the views and shapes the answer by the scopes;
 * 5. `send`: the ETag, the 304, the Content-Digest and the RFC 9421 signature (decisions 23–24).
 */
export function readPipeline(deps: ReadPipelineDeps) {
  const { config, clock, staleness } = deps;
  const authenticateRecipient = recipientAuthenticator(deps);
  const authenticateAccount = accountAuthenticator(deps);
  const signer = deps.responseSigner ?? createResponseSigner(deps.signingKeys, { reuseSeconds: config.RESPONSE_SIGNATURE_REUSE_S });
  const recording: RecordingDeps | undefined = deps.recordAccess && {
    record: deps.recordAccess,
    clock,
    nextId: accessRecordIds(),
    isoOf: isoInstants(),
  };

  const refuseWhileStale = (): void => {
    if (staleness?.isStale(clock.now())) {
      throw serviceUnavailable('This replica has lost touch with the event log, so its data may be out of date; retry shortly', {
        retryAfterS: STALE_RETRY_AFTER_S,
      });
    }
  };

  return {
    views: deps.views,
    signingKeys: deps.signingKeys,
    clock,
    send: representationSender(signer, clock) satisfies Send,
    sendBytes: bytesSender(signer, clock),

    label(res: Response, route: string): void {
      res.locals.metricsRoute = route;
      res.setHeader('Cache-Control', 'no-store');
    },

    /** Steps 2 and 3 for one grant's resource; the grant is in the access log once its credential is found. */
    async grant(req: Request, res: Response, read: GrantRead): Promise<Reader> {
      refuseWhileStale();
      const recipient = await authenticateRecipient(req, res, {
        rawClientId: read.rawClientId,
        scope: read.scope,
        onCredentialFound: recording
          ? (clientId, clientAddress) => recordOnFinish(res, { clientIds: [clientId], resource: read.access, clientAddress }, recording)
          : undefined,
      });
      const { credential } = recipient;
      return { clientId: recipient.clientId, organizationId: credential.organizationId, scopes: credential.scopes, credential };
    },

    /** Steps 2 and 3 for an account's pages (decision 42): the account's key, then its limit. */
    async account(req: Request, res: Response): Promise<PortfolioReader> {
      refuseWhileStale();
      const { account, clientAddress } = await authenticateAccount(req, res);
      return { account, clientAddress, now: clock.now() };
    },

    /** A page served grants' data: each of them is in its own access log, as a read by its own key would be (decision 21). */
    recordServed(res: Response, resource: AccessResource, clientIds: readonly string[], reader: PortfolioReader): void {
      if (recording) recordOnFinish(res, { clientIds, resource, clientAddress: reader.clientAddress }, recording);
    },
  };
}
export type ReadPipeline = ReturnType<typeof readPipeline>;

/** The staleness probe reads the log every second: a replica back in touch serves again within a few. */
const STALE_RETRY_AFTER_S = 5;
