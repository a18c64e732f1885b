import { EVENT_TYPES, type CalculatedScore } from '@rsd/contracts';
import { copyOf, scoreVersion, supersedes } from './scores';
import { unhandled, type ViewDefinition } from './view';

/** The organization's latest score (decision 2): one document per organization. */
export const latestScoreView: ViewDefinition<CalculatedScore> = {
  name: 'latest_scores',

  keyOf(event) {
    switch (event.type) {
      case EVENT_TYPES.scoreCalculated:
        return event.data.organizationId;
      case EVENT_TYPES.authorizationCreated:
      case EVENT_TYPES.authorizationRevoked:
      case EVENT_TYPES.authorizationExpired:
        return undefined;
      default:
        return unhandled(event);
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case EVENT_TYPES.scoreCalculated:
        return supersedes(event.data, state) ? copyOf(event.data) : state;
      case EVENT_TYPES.authorizationCreated:
      case EVENT_TYPES.authorizationRevoked:
      case EVENT_TYPES.authorizationExpired:
        return state;
      default:
        return unhandled(event);
    }
  },

  versionOf: scoreVersion,
};
