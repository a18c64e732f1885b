import { EVENT_TYPES, type CalculatedScore, type DomainEvent } from '@rsd/contracts';
import { unhandled } from './view';

/**
 * Whether `candidate` should replace `current` (decision 2): a greater scoreDate wins; for the same
 * date a later calculatedAt does; a late score for an older date never does.
 */
export function supersedes(candidate: CalculatedScore, current: CalculatedScore | undefined): boolean {
  if (!current) return true;
  if (candidate.scoreDate !== current.scoreDate) return candidate.scoreDate > current.scoreDate;
  return Date.parse(candidate.calculatedAt) > Date.parse(current.calculatedAt);
}

/** The event's score, copied so that a view never shares structure with an event. */
export function copyOf(score: CalculatedScore): CalculatedScore {
  const { organizationId, scoreDate, score: value, grade, pillarScores, calculatedAt } = score;
  return { organizationId, scoreDate, score: value, grade, pillarScores: { ...pillarScores }, calculatedAt };
}

/**
 * Instants are written in UTC with milliseconds and `Z` (the contract's schema) and dates as
 * YYYY-MM-DD, so these strings order exactly as `supersedes` does.
 */
export function scoreVersion(score: CalculatedScore): string {
  return `${score.scoreDate}|${score.calculatedAt}`;
}

/**
 * The score views' shared rules: a document is keyed by something of the score (`keyOfScore`), and
 * holds the calculation that supersedes every other one it has seen. Authorization events concern
 * neither view.
 */
export function scoreViewRules(keyOfScore: (score: CalculatedScore) => string) {
  return {
    // A score supersedes or is superseded, whole: nothing of an earlier calculation is kept (decision 2).
    newestWins: true,

    keyOf(event: DomainEvent): string | undefined {
      switch (event.type) {
        case EVENT_TYPES.scoreCalculated:
          return keyOfScore(event.data);
        case EVENT_TYPES.authorizationCreated:
        case EVENT_TYPES.authorizationRevoked:
        case EVENT_TYPES.authorizationExpired:
        case EVENT_TYPES.authorizationKeyRotated:
        case EVENT_TYPES.authorizationKeyClaimed:
        case EVENT_TYPES.authorizationJoinedAccount:
        case EVENT_TYPES.recipientAccountCreated:
        case EVENT_TYPES.recipientAccountKeyRotated:
        case EVENT_TYPES.authorizationPreviousKeyRevoked:
        case EVENT_TYPES.recipientAccountKeyRevoked:
        case EVENT_TYPES.authorizationAlerted:
          return undefined;
        default:
          return unhandled(event);
      }
    },

    evolve(state: CalculatedScore | undefined, event: DomainEvent): CalculatedScore | undefined {
      switch (event.type) {
        case EVENT_TYPES.scoreCalculated:
          return supersedes(event.data, state) ? copyOf(event.data) : state;
        case EVENT_TYPES.authorizationCreated:
        case EVENT_TYPES.authorizationRevoked:
        case EVENT_TYPES.authorizationExpired:
        case EVENT_TYPES.authorizationKeyRotated:
        case EVENT_TYPES.authorizationKeyClaimed:
        case EVENT_TYPES.authorizationJoinedAccount:
        case EVENT_TYPES.recipientAccountCreated:
        case EVENT_TYPES.recipientAccountKeyRotated:
        case EVENT_TYPES.authorizationPreviousKeyRevoked:
        case EVENT_TYPES.recipientAccountKeyRevoked:
        case EVENT_TYPES.authorizationAlerted:
          return state;
        default:
          return unhandled(event);
      }
    },
  };
}
