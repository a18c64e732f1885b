import { EVENT_TYPES, type CalculatedScore } from '@rsd/contracts';
import { viewEvents } from './view';

/**
 * Whether `candidate` should replace `current` (decision 2): a greater scoreDate wins; for the same
 * date a later calculatedAt does; a late score for an older date never does.
 */
export function supersedes(candidate: CalculatedScore, current: CalculatedScore | undefined): boolean {
  if (!current) return true;
  if (candidate.scoreDate !== current.scoreDate) return candidate.scoreDate > current.scoreDate;
  return Date.parse(candidate.calculatedAt) > Date.parse(current.calculatedAt);
}

/**
 * A score as the score views keep it: the calculation, and the id of the event that carried it (a
 * certificate names the events it rests on, decision 55); absent in views built before that.
 */
export type ScoreView = CalculatedScore & { eventId?: string };

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
 * holds the calculation that supersedes every other one it has seen. A score is the only event they
 * are made of.
 */
export function scoreViewRules(keyOfScore: (score: CalculatedScore) => string) {
  return {
    // A score supersedes or is superseded, whole: nothing of an earlier calculation is kept (decision 2).
    newestWins: true,

    ...viewEvents<ScoreView>()({
      keyOf: (event) => keyOfScore(event.data),
      on: {
        [EVENT_TYPES.scoreCalculated]: (state, event) =>
          supersedes(event.data, state) ? { ...copyOf(event.data), eventId: event.id } : state,
      },
    }),
  };
}
