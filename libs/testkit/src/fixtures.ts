import type { Certificate, ScoreSubmission } from '@rsd/contracts';
import { aCalculatedScore } from './contracts/port-fixtures';

/** acme's score of 2026-11-20 as a client submits it (no calculatedAt), with `overrides`. */
export function aScoreSubmission(overrides: Partial<ScoreSubmission> = {}): ScoreSubmission {
  const { calculatedAt: _calculatedAt, ...submission } = aCalculatedScore('acme', '2026-11-20');
  return { ...submission, ...overrides };
}

/** A certificate (decision 55) of acme's score of 2026-11-20 as of 2026-11-25, issued to an auditor, with `overrides`. */
export function aCertificate(overrides: Partial<Certificate> = {}): Certificate {
  return {
    certificateId: 'crt_AAAAAAAAAAAAAAAAAAAAAA',
    organization: { organizationId: 'acme' },
    recipient: { clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA', type: 'auditor', name: null },
    score: 72,
    grade: 'Strengthen',
    scoreDate: '2026-11-20',
    calculatedAt: '2026-11-20T06:00:00.000Z',
    asOf: '2026-11-25',
    issuedAt: '2026-12-02T06:00:00.000Z',
    eventIds: ['score-event', 'created-event'],
    ...overrides,
  };
}
