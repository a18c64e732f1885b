import type { CalculatedScore, WebhookConditions } from '@rsd/contracts';

/**
 * Decision 45: whether a change of an organization's latest score passes a webhook's conditions. A
 * change is delivered when any condition present holds; no condition at all means every change.
 * Without a previous latest score there is nothing to have dropped from or changed grade from, so
 * only `scoreBelow` can hold.
 */
export function conditionsHold(
  conditions: WebhookConditions | undefined,
  previous: CalculatedScore | undefined,
  latest: CalculatedScore,
): boolean {
  const { scoreBelow, scoreDropAtLeast, gradeChanged } = conditions ?? {};
  if (scoreBelow === undefined && scoreDropAtLeast === undefined && gradeChanged === undefined) return true;
  if (scoreBelow !== undefined && latest.score < scoreBelow) return true;
  if (scoreDropAtLeast !== undefined && previous !== undefined && previous.score - latest.score >= scoreDropAtLeast) return true;
  return gradeChanged === true && previous !== undefined && previous.grade !== latest.grade;
}
