import { scoreVersion, scoreViewRules, type ScoreView } from './scores';
import type { ViewDefinition } from './view';

/**
 * The organization's latest score (decision 2): one document per organization. The notifier stores
 * it to tell what a score changes; the read API reads the same thing off the history (currentScoreView).
 */
export const latestScoreView: ViewDefinition<ScoreView> = {
  name: 'latest_scores',
  ...scoreViewRules((score) => score.organizationId),
  versionOf: scoreVersion,
};
