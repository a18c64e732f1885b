import type { ScoreView } from './scores';
import { latestScoreView } from './latest-score-view';
import { scoreHistoryView } from './score-history-view';
import type { ViewDefinition } from './view';

/**
 * The organization's latest score as the read API serves it (decision 2), stored nowhere: it is the
 * head of the organization's history, because history keeps each date's latest calculation and is
 * ordered by date, which is exactly how one score supersedes another (`supersedes`). One document
 * fewer to write for every score; its rules are the latest score's, so a cache that applies events
 * to it agrees with the store.
 */
export const currentScoreView: ViewDefinition<ScoreView> = {
  ...latestScoreView,
  name: 'current_scores',
  headOf: scoreHistoryView,
};
