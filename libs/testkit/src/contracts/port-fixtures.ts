import { EVENT_TYPES, type CalculatedScore, type ScoreCalculated } from '@rsd/contracts';
import type { CredentialView, StoredAuthorization } from '@rsd/domain';
import type { OutboxEntry } from '@rsd/ports';
import { anEvent } from '../events';
import { uniqueName } from './eventually';

// Values for the ports' own types, unique per call where they must be: shared by the contract suites and adapter tests.

/** An organization id no other test uses (letters, digits, `_` and `-`, at most 60 of them). */
export function aUniqueOrganizationId(): string {
  return uniqueName('org')
    .replace(/[^A-Za-z0-9_-]/g, '')
    .slice(-60);
}

export function aUniqueClientId(): string {
  return `rs_${uniqueName('c')
    .replace(/[^A-Za-z0-9]/g, '')
    .padEnd(20, '0')}`;
}

export function aStoredAuthorization(overrides: Partial<StoredAuthorization> = {}): StoredAuthorization {
  return {
    clientId: aUniqueClientId(),
    organizationId: uniqueName('org'),
    recipientType: 'insurance_provider',
    recipientName: 'Acme Insurance',
    scopes: ['qr_score'],
    keyDigest: 'a'.repeat(64),
    expiresAt: null,
    createdAt: '2026-11-20T08:00:00.000Z',
    revokedAt: null,
    expiredAt: null,
    revision: 1,
    ...overrides,
  };
}

/**
 * One fixed authorization record (the same on every call, for decisions whose events name it): an
 * auditor's active grant of `acme`, with its own key, created 2026-11-20 10:00 UTC, no expiry.
 */
export function anAuthorizationRecord(overrides: Partial<StoredAuthorization> = {}): StoredAuthorization {
  return {
    clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
    organizationId: 'acme',
    recipientType: 'auditor',
    recipientName: null,
    scopes: ['qr_score'],
    keyDigest: 'a'.repeat(64),
    expiresAt: null,
    createdAt: '2026-11-20T10:00:00.000Z',
    revokedAt: null,
    expiredAt: null,
    revision: 1,
    ...overrides,
  };
}

/** A credential view as creating its authorization leaves it: active, no earlier key, any client address, unless `fields` say otherwise. */
export function anActiveCredentialView(
  fields: Pick<CredentialView, 'clientId' | 'organizationId' | 'keyDigest'> & Partial<CredentialView>,
): CredentialView {
  return {
    previousKeyDigest: null,
    previousKeyExpiresAt: null,
    allowedCidrs: null,
    scopes: ['qr_score'],
    status: 'active',
    expiresAt: null,
    recipientAccountId: null,
    revision: 1,
    ...fields,
  };
}

export function anOutboxEntry(record: StoredAuthorization, name: string): OutboxEntry {
  return { id: uniqueName(name), topic: 'rsd.authorizations.v1', key: record.clientId, value: JSON.stringify({ name }) };
}

export function aCalculatedScore(organizationId: string, scoreDate: string, overrides: Partial<CalculatedScore> = {}): CalculatedScore {
  return {
    organizationId,
    scoreDate,
    score: 72,
    grade: 'Strengthen',
    pillarScores: { structuralIntegrity: 70, failureResistance: 75, deviceHealth: 68, recoveryCapability: 77 },
    calculatedAt: `${scoreDate}T06:00:00.000Z`,
    ...overrides,
  };
}

export function scoreCalculated(score: CalculatedScore): ScoreCalculated {
  return anEvent(EVENT_TYPES.scoreCalculated, score, {
    id: uniqueName('event'),
    source: '/test/contracts',
    time: new Date(score.calculatedAt),
  });
}
