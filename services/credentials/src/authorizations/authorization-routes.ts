import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response, Router } from 'express';
import { clientIdPattern, organizationIdSchema } from '@rsd/contracts';
import { generateApiKey, generateClaimToken, generateClientId } from '@rsd/domain';
import type { AccessLogStore } from '@rsd/ports';
import {
  answerChange,
  ApiError,
  jsonBody,
  exportFormatOf,
  answerOtherMethods,
  noStore,
  requireCaller,
  tokenOrigin,
  type CallerRequirement,
  type TokenVerifier,
} from '@rsd/platform';
import { createAuthorization } from './create-authorization';
import { authorizationListQueryOf, selectAuthorizations } from './authorization-list-query';
import { getAuthorization, listAuthorizations, listWithAlerts } from './find-authorizations';
import { revokeAuthorization } from './revoke-authorization';
import { rotateAuthorization } from './rotate-authorization';
import type { UseCaseDeps } from './use-case-deps';
import { accessLogQueryOf } from '../access-log/access-log-query';
import { issueClaimLink } from '../claims/claim-key';
import { exportAccessLog, listAccessLog, type AccessLogDeps } from '../access-log/list-access-log';
import { readsPerDay } from '../access-log/reads-per-day';
import { labelledRouter } from '@rsd/observability';

export interface AuthorizationRoutesDeps extends Omit<UseCaseDeps, 'newEventId'> {
  accessLog: AccessLogDeps['accessLog'] & Pick<AccessLogStore, 'dailyReads'>;
  verifyToken: TokenVerifier;
  clientIdPrefix: string;
  apiKeyPrefix: string;
  /** Decision 38: where claim links point; undefined: the origin the request reached. */
  claimLinkBaseUrl: string | undefined;
}

const COLLECTION = '/organizations/:organizationId/authorizations';
const ITEM = `${COLLECTION}/:clientId` as const;
const REVOKE = `${ITEM}/revoke` as const;
const ROTATE = `${ITEM}/rotate` as const;
const ACCESS_LOG = `${ITEM}/access-log` as const;
const CLAIM_LINK = `${ITEM}/claim-link` as const;
const DAILY_READS = `${ITEM}/daily-reads` as const;
const ALERTS = '/organizations/:organizationId/alerts';
const BODY_LIMIT = '16kb';

/** HTTP adapter: each route checks the path and the caller, then hands over to one use case. */
export function authorizationRoutes(deps: AuthorizationRoutesDeps): Router {
  const useCaseDeps: UseCaseDeps = { ...deps, newEventId: randomUUID };
  const generate = {
    clientId: () => generateClientId(deps.clientIdPrefix),
    apiKey: () => generateApiKey(deps.apiKeyPrefix),
    claimToken: generateClaimToken,
  };
  const claimLinkBase = (req: Request) => claimLinkBaseOf(req, deps.claimLinkBaseUrl);
  /** Decision 54: a change is made by the token's holder, once requireCaller has verified it. */
  const asCaller = (req: Request, res: Response): UseCaseDeps => ({ ...useCaseDeps, origin: tokenOrigin(req, res) });
  const guard = organizationCallers(deps.verifyToken).writer;
  // Then, for one authorization: a Client ID that cannot be one is unknown without a lookup, so no
  // store ever sees what a hostile path carries (a NUL byte, which PostgreSQL refuses, for one).
  const clientIds = clientIdPattern(deps.clientIdPrefix);
  const itemGuard: RequestHandler[] = [
    ...guard,
    (req, _res, next) =>
      next(
        clientIds.test(String(req.params.clientId))
          ? undefined
          : new ApiError('AUTHORIZATION_NOT_FOUND', 'No such authorization in this organization'),
      ),
  ];

  const router = labelledRouter();
  // Administrative data, and the create response carries a secret: nothing here may be cached.
  router.use(COLLECTION, noStore);
  router.use(ALERTS, noStore);

  router
    .route(COLLECTION)
    .get(...guard, async (req, res) => {
      // Decision 54: filtered, and paged when `limit` or `cursor` is given; every match at once otherwise, as before.
      const query = authorizationListQueryOf(req);
      res.json(selectAuthorizations(await listAuthorizations(useCaseDeps, req.params.organizationId), query));
    })
    .post(...guard, ...jsonBody(BODY_LIMIT), async (req, res) => {
      const organizationId = req.params.organizationId;
      const body: unknown = req.body;
      const created = await createAuthorization(asCaller(req, res), generate, organizationId, body, claimLinkBase(req));
      res.status(201).location(`/v1/organizations/${organizationId}/authorizations/${created.clientId}`).json(created);
    });

  router.route(ITEM).get(...itemGuard, async (req, res) => {
    res.json(await getAuthorization(useCaseDeps, req.params.organizationId, req.params.clientId));
  });

  router.route(REVOKE).post(...itemGuard, async (req, res) => {
    const { authorization, publication } = await revokeAuthorization(asCaller(req, res), req.params.organizationId, req.params.clientId);
    // Decision 29: 200 only once the revocation is in the event log; otherwise it is recorded and owed.
    answerChange(res, publication, authorization);
  });

  router.route(ROTATE).post(...itemGuard, ...jsonBody(BODY_LIMIT), async (req, res) => {
    const body: unknown = req.body;
    const { rotated, publication } = await rotateAuthorization(
      asCaller(req, res),
      generate,
      req.params.organizationId,
      req.params.clientId,
      body,
    );
    // The new key works once the Rotated event reaches the read API; until then the previous one still does.
    answerChange(res, publication, rotated);
  });

  router.route(CLAIM_LINK).post(...itemGuard, ...jsonBody(BODY_LIMIT), async (req, res) => {
    const body: unknown = req.body;
    const { organizationId, clientId } = req.params;
    res.json(await issueClaimLink(asCaller(req, res), generate, organizationId, clientId, body, claimLinkBase(req)));
  });

  router.route(ACCESS_LOG).get(...itemGuard, async (req, res) => {
    const query = accessLogQueryOf(req);
    const format = exportFormatOf(req);
    const { organizationId, clientId } = req.params;
    if (format === 'json') res.json(await listAccessLog(deps, organizationId, clientId, query));
    else await exportAccessLog(deps, res, format, { organizationId, clientId }, query);
  });

  // Decision 51: what the console shows beside the list and on an authorization's page, read like the rest.
  router.route(ALERTS).get(...guard, async (req, res) => {
    res.json({ alerts: (await listWithAlerts(useCaseDeps, req.params.organizationId)).alerts });
  });

  router.route(DAILY_READS).get(...itemGuard, async (req, res) => {
    res.json({ days: await readsPerDay(deps, req.params.organizationId, req.params.clientId) });
  });

  return answerOtherMethods(router);
}

/**
 * Who may act on an organization's grants, reviews and trail: its writers (`authorizations:write`), and
 * its readers (either scope). The organization id is checked before the caller, so a malformed one is a
 * 400 for everybody.
 */
export function organizationCallers(verifyToken: TokenVerifier): { writer: RequestHandler[]; reader: RequestHandler[] } {
  const callers = (scope: CallerRequirement['scope']) => [
    requireValidOrganizationId,
    requireCaller(verifyToken, { scope, organizationParam: 'organizationId' }),
  ];
  return { writer: callers('authorizations:write'), reader: callers(['authorizations:read', 'authorizations:write']) };
}

export const requireValidOrganizationId: RequestHandler = (req, _res, next) => {
  if (!organizationIdSchema.safeParse(req.params.organizationId).success) {
    next(new ApiError('INVALID_ORGANIZATION_ID', 'The organization id must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"'));
    return;
  }
  next();
};

/** Decision 38: the configured public origin, else the one the request reached (a caller holding the organization's token chose it). */
export function claimLinkBaseOf(req: Request, configured: string | undefined): string {
  return configured ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}
