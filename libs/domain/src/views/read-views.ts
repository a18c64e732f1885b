import { accountKeyView, portfolioGrantView, recipientAccountView } from './account-views';
import { credentialView } from './credential-view';
import { currentScoreView } from './current-score-view';
import { scoreHistoryView } from './score-history-view';
import type { ViewDefinition } from './view';

/**
 * Every view the read API reads; the projection writes those stored (not a `headOf` view). Adding a
 * view: one evolve module, and one line here.
 */
export const READ_VIEWS: readonly ViewDefinition<unknown>[] = [
  credentialView,
  currentScoreView,
  scoreHistoryView,
  recipientAccountView,
  accountKeyView,
  portfolioGrantView,
];
