import { EVENT_TYPES, newEvent, partitionKeyOf, scoreCalculatedSchema, type CalculatedScore, type ScoreCalculated } from '@rsd/contracts';
import type { OutgoingRecord } from '@rsd/ports';

export const EVENT_SOURCE = '/score-ingest';

export function scoreCalculated(score: CalculatedScore, stamp: { id: string; time: Date }): ScoreCalculated {
  return scoreCalculatedSchema.parse(
    newEvent<ScoreCalculated>({ ...stamp, source: EVENT_SOURCE, type: EVENT_TYPES.scoreCalculated, data: score }),
  );
}

/** Keyed by organization, so one organization's scores stay in order. */
export function recordOf(event: ScoreCalculated): OutgoingRecord {
  return { key: partitionKeyOf(event), value: JSON.stringify(event) };
}
