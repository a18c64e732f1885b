import type { CalculatedScore } from '@rsd/contracts';

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
