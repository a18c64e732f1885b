import { MAX_SCORES_PER_BATCH } from '@rsd/contracts';
import { organizationId, type DataSetShape } from './data-set-shape';
import { submissionOf } from './score-factory';

/**
 * Today's scores, one organization after the other, as a scoring engine posts them, without
 * `calculatedAt` (the time of receipt stands in). At least 1,000 organizations take turns, so a
 * batch never names one twice whatever the data set: below 1,000, the organizations past the data
 * set's are customers who have shared their score with nobody yet. Once every one has had its
 * score, the next round posts the same date again: a recalculation, which score ingest accepts and
 * the views keep as the latest calculation of that date.
 */
export function singleScoreBodies(shape: DataSetShape, now: Date): () => string {
  const scoreDate = now.toISOString().slice(0, 10);
  const organizations = Math.max(shape.organizations, MAX_SCORES_PER_BATCH);
  let next = 0;
  return () => {
    const o = next++ % organizations;
    return JSON.stringify({ organizationId: organizationId(o), scoreDate, ...submissionOf(o, shape.days + next) });
  };
}

const DISTINCT_BATCHES = 4;

/** Full batches (1,000 scores, the most score ingest takes), built once and posted in turn. */
export function batchBodies(shape: DataSetShape, now: Date): () => string {
  const single = singleScoreBodies(shape, now);
  const batches = Array.from(
    { length: DISTINCT_BATCHES },
    () => `{"scores":[${Array.from({ length: MAX_SCORES_PER_BATCH }, single).join(',')}]}`,
  );
  let next = 0;
  return () => batches[next++ % batches.length]!;
}

export const BATCH_SIZE = MAX_SCORES_PER_BATCH;
