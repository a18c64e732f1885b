import { EVENT_TYPES, newEvent, partitionKeyOf, type CalculatedScore, type ScoreCalculated } from '@rsd/contracts';
import type { OutgoingRecord } from '@rsd/ports';

export const EVENT_SOURCE = '/score-ingest';

/**
 * The event of a score that validateScoreSubmission accepted. It is not validated a second time
 * against the event schema, which would add a large share to ingest's own work: its data passed
 * the submission's schema, which is the event's but for `calculatedAt`, written here in UTC with
 * milliseconds; the tests read every event they make through the event schema, and every consumer
 * validates anyway.
 */
export function scoreCalculated(score: CalculatedScore, stamp: { id: string; time: Date }): ScoreCalculated {
  return newEvent<ScoreCalculated>({ ...stamp, source: EVENT_SOURCE, type: EVENT_TYPES.scoreCalculated, data: score });
}

/** Keyed by organization, so one organization's scores stay in order. */
export function recordOf(event: ScoreCalculated): OutgoingRecord {
  return { key: partitionKeyOf(event), value: JSON.stringify(event) };
}
