import { scoreViewRules, type ScoreView } from './scores';
import type { ListedView } from './view';

/**
 * One document per organization and scoreDate, holding that date's latest calculation; listed per
 * organization, newest date first. A late score for an older date lands here even though it never
 * becomes the latest.
 */
export const scoreHistoryView: ListedView<ScoreView> = {
  name: 'score_history',
  ...scoreViewRules((score) => `${score.organizationId}|${score.scoreDate}`),
  // Within one date, the later calculation is the newer state.
  versionOf: (state) => state.calculatedAt,
  partitionOf: (state) => state.organizationId,
  sortKeyOf: (state) => state.scoreDate,
};
