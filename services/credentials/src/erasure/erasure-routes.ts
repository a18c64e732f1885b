import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { clientIdPattern } from '@rsd/contracts';
import { offboardingOf } from '@rsd/domain';
import { labelledRouter } from '@rsd/observability';
import { ApiError, methodNotAllowed, recipientOrigin, requireCaller, tokenOrigin, type TokenVerifier } from '@rsd/platform';
import type { LimitCheck } from '@rsd/recipient-access';
import { organizationCallers, requireValidOrganizationId } from '../authorizations/authorization-routes';
import { findOwnAuthorization } from '../authorizations/find-authorizations';
import { accountCallers } from '../portfolio/portfolio-routes';
import { eraseAccount, eraseRecipient, offboardOrganization, type ErasureDeps } from './erasure';

export interface ErasureRoutesDeps extends Omit<ErasureDeps, 'newEventId'> {
  verifyToken: TokenVerifier;
  clientIdPrefix: string;
  /** A refused account key counts against the address's failed-authentication budget, as everywhere. */
  limitFailures: LimitCheck;
}

export const ORGANIZATION_PATH = '/organizations/:organizationId';
export const OFFBOARDING_PATH = `${ORGANIZATION_PATH}/offboarding`;
export const GRANT_ERASURE_PATH = `${ORGANIZATION_PATH}/authorizations/:clientId/erasure`;
/** Under /v1/portfolio, with the portfolio's other routes. */
export const ACCOUNT_ERASURE_PATH = '/erasure';

/**
 * Decision 56's routes: an organization's offboarding and its state (scope `organizations:delete`), a
 * recipient's erasure on one grant (`authorizations:write`), and a recipient account's own (its key).
 * Each answers 202: what the other services keep is purged as they read the events that follow.
 */
export function erasureRoutes(deps: ErasureRoutesDeps): { organizations: Router; portfolio: Router } {
  const useCaseDeps: ErasureDeps = { ...deps, newEventId: randomUUID };
  const offboarding = [
    requireValidOrganizationId,
    requireCaller(deps.verifyToken, { scope: 'organizations:delete', organizationParam: 'organizationId' }),
  ];
  const clientIds = clientIdPattern(deps.clientIdPrefix);
  const noStore = (res: Response) => res.setHeader('Cache-Control', 'no-store');

  const organizations = labelledRouter();
  organizations
    .route(ORGANIZATION_PATH)
    .delete(...offboarding, async (req: Request, res: Response) => {
      const organizationId = String(req.params.organizationId);
      // Nothing is undone: the caller names the organization twice, in the path and in `confirm`.
      if (req.query.confirm !== organizationId) {
        throw new ApiError(
          'OFFBOARDING_NOT_CONFIRMED',
          'Offboarding erases the organization for good: repeat its id as ?confirm=<organizationId>',
        );
      }
      const record = await offboardOrganization({ ...useCaseDeps, origin: tokenOrigin(req, res) }, organizationId);
      noStore(res);
      res.status(202).location(`/v1/organizations/${organizationId}/offboarding`).json(offboardingOf(record));
    })
    .all(methodNotAllowed(['DELETE']));

  organizations
    .route(OFFBOARDING_PATH)
    .get(...offboarding, async (req, res) => {
      const record = await deps.offboardings.find(String(req.params.organizationId), deps.clock.now());
      if (!record)
        throw new ApiError('OFFBOARDING_NOT_FOUND', 'This organization has no offboarding on record (none, or done more than 30 days ago)');
      noStore(res);
      res.json(offboardingOf(record));
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  organizations
    .route(GRANT_ERASURE_PATH)
    .post(...organizationCallers(deps.verifyToken).writer, async (req, res) => {
      const clientId = String(req.params.clientId);
      if (!clientIds.test(clientId)) throw new ApiError('AUTHORIZATION_NOT_FOUND', 'No such authorization in this organization');
      const grant = await findOwnAuthorization(deps.store, String(req.params.organizationId), clientId);
      noStore(res);
      res.status(202).json(await eraseRecipient({ ...useCaseDeps, origin: tokenOrigin(req, res) }, grant));
    })
    .all(methodNotAllowed(['POST']));

  const portfolio = labelledRouter();
  const { managingAccount } = accountCallers(useCaseDeps, deps.limitFailures);
  portfolio
    .route(ACCOUNT_ERASURE_PATH)
    .post(async (req, res) => {
      const account = await managingAccount(req, res);
      noStore(res);
      res.status(202).json(await eraseAccount({ ...useCaseDeps, origin: recipientOrigin(req, res, account.accountId) }, account.accountId));
    })
    .all(methodNotAllowed(['POST']));

  return { organizations, portfolio };
}
