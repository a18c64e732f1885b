import { EVENT_TYPES, type CalculatedScore } from '@rsd/contracts';
import { copyOf, supersedes } from './scores';
import { unhandled, type ListedView } from './view';

/**
 * One document per organization and scoreDate, holding that date's latest calculation; listed per
 * organization, newest date first. A late score for an older date lands here even though it never
 * becomes the latest.
 */
export const scoreHistoryView: ListedView<CalculatedScore> = {
  name: 'score_history',

  keyOf(event) {
    switch (event.type) {
      case EVENT_TYPES.scoreCalculated:
        return `${event.data.organizationId}|${event.data.scoreDate}`;
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

  // Within one date, the later calculation is the newer state.
  versionOf: (state) => state.calculatedAt,
  partitionOf: (state) => state.organizationId,
  sortKeyOf: (state) => state.scoreDate,
};
