import { credentialView } from './credential-view';
import { latestScoreView } from './latest-score-view';
import { scoreHistoryView } from './score-history-view';
import type { ViewDefinition } from './view';

/** Every view the read API projects. Adding a view: one evolve module, and one line here. */
export const READ_VIEWS: readonly ViewDefinition<unknown>[] = [credentialView, latestScoreView, scoreHistoryView];
