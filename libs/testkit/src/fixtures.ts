import type { ScoreSubmission } from '@rsd/contracts';
import { aCalculatedScore } from './contracts/port-fixtures';

/** acme's score of 2026-11-20 as a client submits it (no calculatedAt), with `overrides`. */
export function aScoreSubmission(overrides: Partial<ScoreSubmission> = {}): ScoreSubmission {
  const { calculatedAt: _calculatedAt, ...submission } = aCalculatedScore('acme', '2026-11-20');
  return { ...submission, ...overrides };
}
