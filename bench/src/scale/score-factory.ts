import { randomUUID } from 'node:crypto';
import { GRADES, type CalculatedScore, type Grade, type PillarScores } from '@rsd/contracts';
import type { OutgoingRecord } from '@rsd/ports';
import { recordOf, scoreCalculated } from '@rsd/score-ingest/dist/scores/score-events';

/** The fields a scoring engine posts, varying by organization and day so views and history hold real values. */
export function submissionOf(
  organizationIndex: number,
  day: number,
): Omit<CalculatedScore, 'organizationId' | 'scoreDate' | 'calculatedAt'> {
  const pillar = (k: number) => 30 + ((organizationIndex * 37 + k * 11 + day * (k + 1)) % 66);
  const pillarScores: PillarScores = {
    structuralIntegrity: pillar(0),
    failureResistance: pillar(1),
    deviceHealth: pillar(2),
    recoveryCapability: pillar(3),
  };
  const score = Math.round(
    (pillarScores.structuralIntegrity + pillarScores.failureResistance + pillarScores.deviceHealth + pillarScores.recoveryCapability) / 4,
  );
  return { score, grade: gradeOf(score), pillarScores };
}

/** Any consistent mapping will do: the product takes the grade as the engine sends it. */
function gradeOf(score: number): Grade {
  return GRADES[Math.min(GRADES.length - 1, Math.floor((100 - score) / 15))]!;
}

/**
 * A ScoreCalculated record exactly as score ingest appends it for a score posted without
 * `calculatedAt`: calculated when received, early on its date (so always in the past).
 */
export function scoreRecordOf(organizationId: string, organizationIndex: number, day: number, scoreDate: string): OutgoingRecord {
  const received = new Date(Date.parse(`${scoreDate}T02:00:00.000Z`) + (organizationIndex % 7200) * 1000);
  const score: CalculatedScore = {
    organizationId,
    scoreDate,
    ...submissionOf(organizationIndex, day),
    calculatedAt: received.toISOString(),
  };
  return recordOf(scoreCalculated(score, { id: randomUUID(), time: received }));
}
