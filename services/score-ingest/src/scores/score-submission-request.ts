import {
  isoDateSchema,
  instantInputSchema,
  scoreBatchSchema,
  scoreSubmissionSchema,
  type CalculatedScore,
  type ScoreSubmission,
} from '@rsd/contracts';
import { issueDetails, pathOf, requestErrorMap, validationFailed, type ErrorDetail } from '@rsd/platform';

/**
 * How far ahead of our clock an upstream `calculatedAt` may be. A calculation stamped far in the
 * future would win over every real recalculation of its date, so it is refused.
 */
export const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;

/**
 * One score, or `{ scores: [...] }`. The batch is valid as a whole or not at all: every problem of
 * every item is reported, each with the item's index, and nothing is accepted.
 */
export function validateScoreSubmission(body: unknown, receivedAt: Date): CalculatedScore[] {
  const batch = isBatch(body);
  const items: unknown[] = isBatch(body) ? (Array.isArray(body.scores) ? body.scores : []) : [body];
  const parsed = batch
    ? scoreBatchSchema.safeParse(body, { error: requestErrorMap })
    : scoreSubmissionSchema.safeParse(body, { error: requestErrorMap });
  const details = parsed.success ? [] : issueDetails(parsed.error.issues).map(withItemIndex(batch));
  details.push(...timeProblems(items, batch, receivedAt));
  // Stable sort: each item's problems together, in item order.
  details.sort((a, b) => (a.index ?? -1) - (b.index ?? -1));
  if (!parsed.success || details.length > 0) {
    throw validationFailed(details, batch ? 'The batch is invalid; no score in it was accepted' : 'The score is invalid');
  }
  const submissions: ScoreSubmission[] = 'scores' in parsed.data ? parsed.data.scores : [parsed.data];
  return submissions.map((submission) => calculatedScoreOf(submission, receivedAt));
}

/** Receipt time stands in for a missing `calculatedAt`; every instant leaves in UTC with milliseconds. */
function calculatedScoreOf(submission: ScoreSubmission, receivedAt: Date): CalculatedScore {
  const { calculatedAt, ...score } = submission;
  return { ...score, calculatedAt: (calculatedAt ? new Date(calculatedAt) : receivedAt).toISOString() };
}

function isBatch(body: unknown): body is { scores: unknown } {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && 'scores' in body;
}

function withItemIndex(batch: boolean): (detail: ErrorDetail) => ErrorDetail {
  return (detail) => {
    const [first, second] = detail.path.split('.');
    return batch && first === 'scores' && second !== undefined && /^\d+$/.test(second) ? { ...detail, index: Number(second) } : detail;
  };
}

/**
 * Checks that need the clock, run on each item whose dates are well-formed, whatever else is wrong
 * with the request, so a client sees every problem at once.
 */
function timeProblems(items: unknown[], batch: boolean, receivedAt: Date): ErrorDetail[] {
  const today = receivedAt.toISOString().slice(0, 10);
  const latestCalculation = receivedAt.getTime() + MAX_CLOCK_SKEW_MS;
  return items.flatMap((item, index) => {
    if (typeof item !== 'object' || item === null) return [];
    const at = (field: string): Pick<ErrorDetail, 'path' | 'index'> =>
      batch ? { path: pathOf(['scores', index, field]), index } : { path: field };
    const problems: ErrorDetail[] = [];
    const scoreDate = isoDateSchema.safeParse('scoreDate' in item ? item.scoreDate : undefined);
    if (scoreDate.success && scoreDate.data > today) {
      problems.push({ ...at('scoreDate'), message: `must not be after today (${today}, UTC)` });
    }
    const calculatedAt = instantInputSchema.safeParse('calculatedAt' in item ? item.calculatedAt : undefined);
    if (calculatedAt.success && Date.parse(calculatedAt.data) > latestCalculation) {
      problems.push({ ...at('calculatedAt'), message: 'must not be in the future' });
    }
    return problems;
  });
}
