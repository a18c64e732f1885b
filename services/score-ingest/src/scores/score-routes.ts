import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { callerOf, jsonBody, methodNotAllowed, requireCaller, type TokenVerifier } from '@rsd/platform';
import { ingestScores, type IngestDeps } from './ingest-scores';
import { labelledRouter } from '@rsd/observability';

export interface ScoreRoutesDeps extends Omit<IngestDeps, 'newEventId'> {
  verifyToken: TokenVerifier;
  bodyLimit: string;
}

/** HTTP adapter: checks the caller, parses the body, hands over to the use case. */
export function scoreRoutes(deps: ScoreRoutesDeps): Router {
  const ingestDeps: IngestDeps = { ...deps, newEventId: randomUUID };
  const router = labelledRouter();
  router
    .route('/scores')
    .post(requireCaller(deps.verifyToken, { scope: 'scores:write' }), ...jsonBody(deps.bodyLimit), async (req, res) => {
      const body: unknown = req.body;
      res.status(202).json({ accepted: await ingestScores(ingestDeps, body, callerOf(res).organization) });
    })
    .all(methodNotAllowed(['POST']));
  return router;
}
