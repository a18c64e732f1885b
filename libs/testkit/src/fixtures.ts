import type { ScoreSubmission } from '@rsd/contracts';

export function aScoreSubmission(overrides: Partial<ScoreSubmission> = {}): ScoreSubmission {
  return {
    organizationId: 'acme',
    scoreDate: '2026-11-20',
    score: 72,
    grade: 'Strengthen',
    pillarScores: { structuralIntegrity: 70, failureResistance: 75, deviceHealth: 68, recoveryCapability: 77 },
    ...overrides,
  };
}
