import type { Request, Response } from 'express';
import type { PillarBreakdownResource, ScoreHistoryResource, ScoreResource } from '@rsd/contracts';
import { latestScoreView, scoreHistoryView } from '@rsd/domain';
import { ApiError } from '@rsd/platform';
import type { ViewStore } from '@rsd/ports';
import type { CustomerResource } from './customer-resources';

export const HISTORY_LIMIT = { min: 1, max: 366, default: 30 } as const;

/** Who is reading: the Client ID as called (every response echoes it) and the organization whose scores it reads. */
export interface Reader {
  clientId: string;
  organizationId: string;
}

export type ResourceServer = (req: Request, res: Response, reader: Reader) => Promise<void>;

/**
 * Step 10 of the order of checks: the data. Scores belong to the credential's organization (decision
 * 1). One view lookup per request.
 */
export function resourceServers(store: ViewStore): Record<CustomerResource, ResourceServer> {
  return {
    score: async (_req, res, { clientId, organizationId }) => {
      const latest = await store.get(latestScoreView, organizationId);
      if (!latest) throw new ApiError('SCORE_NOT_FOUND', 'No score has been calculated for this customer yet');
      const body: ScoreResource = { clientId, scoreDate: latest.scoreDate, score: latest.score, grade: latest.grade };
      res.json(body);
    },
    pillars: async (_req, res, { clientId, organizationId }) => {
      const latest = await store.get(latestScoreView, organizationId);
      if (!latest) throw new ApiError('PILLARS_NOT_FOUND', 'No pillar breakdown has been calculated for this customer yet');
      const body: PillarBreakdownResource = { clientId, scoreDate: latest.scoreDate, pillarScores: latest.pillarScores };
      res.json(body);
    },
    // A trend with no points yet is an empty list, not a missing resource.
    scoreHistory: async (req, res, { clientId, organizationId }) => {
      const limit = historyLimitOf(req);
      const history = await store.list(scoreHistoryView, organizationId, limit);
      const body: ScoreHistoryResource = { clientId, scores: history.map(({ scoreDate, score, grade }) => ({ scoreDate, score, grade })) };
      res.json(body);
    },
  };
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
