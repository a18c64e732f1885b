import type { Request, Response } from 'express';
import type { PillarBreakdownResource, ScoreHistoryResource, ScoreResource } from '@rsd/contracts';
import { explainHistory, currentScoreView, scoreHistoryView } from '@rsd/domain';
import { ApiError } from '@rsd/platform';
import type { ViewStore } from '@rsd/ports';
import type { CustomerResource } from './customer-resources';
import { cursorAfter, historyQueryOf, type HistoryQuery } from './history-query';
import type { ReadPipeline, Reader } from '../pipeline/read-pipeline';
import { certificateServer } from '../certificates/serve-certificate';

export type ResourceServer = (req: Request, res: Response, reader: Reader) => Promise<void>;

/**
 * Step 10 of the order of checks: the data. Scores belong to the credential's organization (decision
 * 1). One view lookup per request; a history page two at most.
 */
export function resourceServers(pipeline: ReadPipeline): Record<CustomerResource, ResourceServer> {
  const { views: store, send } = pipeline;
  return {
    score: async (req, res, { clientId, organizationId }) => {
      const latest = await store.get(currentScoreView, organizationId);
      if (!latest) throw new ApiError('SCORE_NOT_FOUND', 'No score has been calculated for this customer yet');
      const body: ScoreResource = { clientId, scoreDate: latest.scoreDate, score: latest.score, grade: latest.grade };
      send(req, res, body, { resource: 'score', document: latest, clientId });
    },
    pillars: async (req, res, { clientId, organizationId }) => {
      const latest = await store.get(currentScoreView, organizationId);
      if (!latest) throw new ApiError('PILLARS_NOT_FOUND', 'No pillar breakdown has been calculated for this customer yet');
      const body: PillarBreakdownResource = { clientId, scoreDate: latest.scoreDate, pillarScores: latest.pillarScores };
      send(req, res, body, { resource: 'pillars', document: latest, clientId });
    },
    // A trend with no points yet (or none in the range) is an empty list, not a missing resource.
    scoreHistory: async (req, res, reader) => {
      const query = historyQueryOf(req);
      const body = await historyPage(store, reader, query);
      if (body.nextCursor !== null) res.setHeader('Link', `<${nextPageUrl(req, query, body.nextCursor)}>; rel="next"`);
      send(req, res, body);
    },
    certificate: certificateServer(pipeline),
  };
}

/**
 * One page, newest first: `limit + 1` snapshots in the range tell whether more remain and give the
 * last item its comparison; when the range runs out first, one more read finds the snapshot just
 * older than the page, wherever it lies, so only the oldest snapshot there is lacks a change.
 */
async function historyPage(
  store: ViewStore,
  { clientId, organizationId, scopes }: Reader,
  query: HistoryQuery,
): Promise<ScoreHistoryResource> {
  const inRange = await store.list(scoreHistoryView, organizationId, {
    limit: query.limit + 1,
    atLeast: query.from,
    atMost: query.to,
    below: query.after,
  });
  const page = inRange.slice(0, query.limit);
  const last = page.at(-1);
  const more = inRange.length > query.limit;
  const olderThanPage = more
    ? inRange[query.limit]
    : last && (await store.list(scoreHistoryView, organizationId, { limit: 1, below: last.scoreDate }))[0];
  return {
    clientId,
    scores: explainHistory(page, olderThanPage, { withPillars: scopes.includes('pillar_breakdown') }),
    nextCursor: more && last ? cursorAfter(last.scoreDate) : null,
  };
}

/** The same request with the next page's cursor: a reference relative to the request's own URL. */
function nextPageUrl(req: Request, query: HistoryQuery, cursor: string): string {
  const parameters = new URLSearchParams();
  if (query.from !== undefined) parameters.set('from', query.from);
  if (query.to !== undefined) parameters.set('to', query.to);
  parameters.set('limit', String(query.limit));
  parameters.set('cursor', cursor);
  return `${req.originalUrl.split('?')[0]}?${parameters.toString()}`;
}
