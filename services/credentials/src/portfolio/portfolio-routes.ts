import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { clientIdPattern } from '@rsd/contracts';
import { labelledRouter } from '@rsd/observability';
import { answerChange, ApiError, jsonBody, answerOtherMethods, noStore, recipientOrigin } from '@rsd/platform';
import { apiKeyOf, countingFailures, portfolioQueryOf, requireCurrentKey, type LimitCheck } from '@rsd/recipient-access';
import type { UseCaseDeps } from '../authorizations/use-case-deps';
import { acceptOffer, autoAcceptOf, declineOffer, listOffers, setAutoAccept } from './offers';
import { accountGenerator, authenticateAccount, rotateAccountKey, type AccountGenerator } from './recipient-accounts';
import { releaseGrant } from './release-grant';

export interface PortfolioRoutesDeps extends Omit<UseCaseDeps, 'newEventId'> {
  clientIdPrefix: string;
  /** A refused account key counts against the address's failed-authentication budget, as on the read API. */
  limitFailures: LimitCheck;
  generate?: AccountGenerator;
}

const BODY_LIMIT = '4kb';
/** Room for the longest auto-accept list the schema allows (1,000 ids of 64 characters), however it is spaced. */
const AUTO_ACCEPT_BODY_LIMIT = '96kb';

/** How a route knows the account calling with its key in `x-api-key`. */
export function accountCallers(deps: UseCaseDeps, limitFailures: LimitCheck) {
  /** Any key of the account that works now: the current one, or the previous one within its overlap. */
  const authenticated = (req: Request, res: Response) =>
    countingFailures(limitFailures, req, res, () => authenticateAccount(deps, apiKeyOf(req.headers['x-api-key'])));
  /** Decision 50: what changes the account takes its current key; the previous one is refused with KEY_READ_ONLY. */
  const managingAccount = async (req: Request, res: Response) => {
    const caller = await authenticated(req, res);
    requireCurrentKey(caller);
    return caller.account;
  };
  return { authenticated, managingAccount };
}

/**
 * Decision 42: what a recipient account changes, here because this service owns keys and grants and
 * emits their events (the read API stays read-only). The caller is the account key in `x-api-key`.
 */
export function portfolioRoutes(deps: PortfolioRoutesDeps): Router {
  const useCaseDeps: UseCaseDeps = { ...deps, newEventId: randomUUID };
  const generate = deps.generate ?? accountGenerator;
  const clientIds = clientIdPattern(deps.clientIdPrefix);
  const router = labelledRouter();

  // The rotation's answer carries a key: nothing here may be cached.
  router.use(noStore);

  const { authenticated, managingAccount } = accountCallers(useCaseDeps, deps.limitFailures);
  /** Decision 54: the account's changes are the recipient's, known by the account's id (never its key). */
  const asAccount = (req: Request, res: Response, accountId: string): UseCaseDeps => ({
    ...useCaseDeps,
    origin: recipientOrigin(req, res, accountId),
  });

  router.route('/keys/rotate').post(...jsonBody(BODY_LIMIT), async (req, res) => {
    const caller = await managingAccount(req, res);
    const body: unknown = req.body;
    const { rotated, publication } = await rotateAccountKey(asAccount(req, res, caller.accountId), generate, caller.accountId, body);
    // The new key works once its event reaches the read API; until then the old one still does.
    answerChange(res, publication, rotated, 201);
  });

  router.route('/customers/:clientId').delete(async (req, res) => {
    const caller = await managingAccount(req, res);
    const clientId = String(req.params.clientId);
    if (!clientIds.test(clientId)) throw new ApiError('AUTHORIZATION_NOT_FOUND', 'This account holds no such grant');
    const publication = await releaseGrant(asAccount(req, res, caller.accountId), caller, clientId);
    // Decision 29, as a revocation: 204 once the release is in the event log, 202 while it is owed.
    answerChange(res, publication);
  });

  // Decision 50: the grants offered to the account, its answers to them, and whose offers it accepts as they are made.
  router.route('/offers').get(async (req, res) => {
    const { account: caller } = await authenticated(req, res);
    res.json(await listOffers(useCaseDeps, caller, portfolioQueryOf(req)));
  });

  /** A Client ID that cannot be one is an offer the account does not have, as an unknown one is: no lookup. */
  const offeredClientId = (req: Request): string => {
    const clientId = String(req.params.clientId);
    if (!clientIds.test(clientId)) throw new ApiError('OFFER_NOT_FOUND', 'No offer to this account has this Client ID');
    return clientId;
  };

  router.route('/offers/:clientId/accept').post(async (req, res) => {
    const caller = await managingAccount(req, res);
    const { customer, publication } = await acceptOffer(asAccount(req, res, caller.accountId), caller, offeredClientId(req));
    // Decision 29, as for a claim into the account: the account's key reads the grant once the event is in the log.
    answerChange(res, publication, customer);
  });

  router.route('/offers/:clientId/decline').post(async (req, res) => {
    const caller = await managingAccount(req, res);
    const publication = await declineOffer(asAccount(req, res, caller.accountId), caller, offeredClientId(req));
    // As a release: 204 once the decline is in the event log, 202 while it is owed.
    answerChange(res, publication);
  });

  router
    .route('/auto-accept')
    .get(async (req, res) => {
      res.json(autoAcceptOf((await authenticated(req, res)).account));
    })
    .put(...jsonBody(AUTO_ACCEPT_BODY_LIMIT), async (req, res) => {
      const caller = await managingAccount(req, res);
      const body: unknown = req.body;
      res.json(await setAutoAccept(useCaseDeps, caller.accountId, body));
    });

  return answerOtherMethods(router);
}
