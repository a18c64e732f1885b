import type { Request, RequestHandler, Response } from 'express';
import type { PillarBreakdownResource, ScoreHistoryResource, ScoreResource } from '@rsd/contracts';
import { ApiError } from '@rsd/platform';
import type { ScoreViews } from '@rsd/ports';
import { requestContext } from '../access/request-context';
import type { CustomerResource } from './customer-resources';

export const HISTORY_LIMIT = { min: 1, max: 366, default: 30 } as const;

/**
 * Step 10 of the order of checks: the data. Scores belong to the credential's organization, and
 * each response echoes the Client ID it was called with. One score lookup per request.
 */
export function scoreRoutes(scores: ScoreViews): Record<CustomerResource, RequestHandler> {
  return {
    score: async (_req, res) => {
      const { clientId, organizationId } = callerOf(res);
      const latest = await scores.latest(organizationId);
      if (!latest) throw new ApiError('SCORE_NOT_FOUND', 'No score has been calculated for this customer yet');
      const body: ScoreResource = { clientId, scoreDate: latest.scoreDate, score: latest.score, grade: latest.grade };
      res.json(body);
    },

    pillars: async (_req, res) => {
      const { clientId, organizationId } = callerOf(res);
      const latest = await scores.latest(organizationId);
      if (!latest) throw new ApiError('PILLARS_NOT_FOUND', 'No pillar breakdown has been calculated for this customer yet');
      const body: PillarBreakdownResource = { clientId, scoreDate: latest.scoreDate, pillarScores: latest.pillarScores };
      res.json(body);
    },

    // A trend with no points yet is an empty list, not a missing resource.
    scoreHistory: async (req, res) => {
      const limit = historyLimitOf(req);
      const { clientId, organizationId } = callerOf(res);
      const history = await scores.history(organizationId, limit);
      const body: ScoreHistoryResource = {
        clientId,
        scores: history.map(({ scoreDate, score, grade }) => ({ scoreDate, score, grade })),
      };
      res.json(body);
    },
  };
}

/** Dispatches to the handler of the resource the path named. */
export function serveCustomerResource(scores: ScoreViews): RequestHandler {
  const routes = scoreRoutes(scores);
  return (req, res, next) => routes[requestContext.path(res).resource](req, res, next);
}

function callerOf(res: Response): { clientId: string; organizationId: string } {
  return { clientId: requestContext.clientId(res), organizationId: requestContext.credential(res).organizationId };
}

/** `?limit=N`, a whole number from 1 to 366 written plainly; anything else is INVALID_PARAMETER. */
function historyLimitOf(req: Request): number {
  const raw: unknown = req.query.limit;
  if (raw === undefined) return HISTORY_LIMIT.default;
  const limit = typeof raw === 'string' && /^[1-9][0-9]{0,2}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit >= HISTORY_LIMIT.min && limit <= HISTORY_LIMIT.max)) {
    throw new ApiError('INVALID_PARAMETER', `limit must be a whole number from ${HISTORY_LIMIT.min} to ${HISTORY_LIMIT.max}`);
  }
  return limit;
}
