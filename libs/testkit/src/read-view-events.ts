import {
  EVENT_TYPES,
  type AuthorizationCreated,
  type AuthorizationExpired,
  type AuthorizationRevoked,
  type CalculatedScore,
  type Scope,
  type ScoreCalculated,
} from '@rsd/contracts';
import { digestApiKey, generateApiKey, generateClientId } from '@rsd/domain';
import { anEvent } from './events';
import { aCalculatedScore } from './contracts/port-fixtures';

// The events the read views are made of, as the credentials and score-ingest services send them:
// real keys and digests, acme's organization unless told.

const SOURCE = '/test/read-api';

export const ALL_SCOPES: Scope[] = ['qr_score', 'pillar_breakdown', 'score_trend'];

export interface CredentialOptions {
  organizationId?: string;
  scopes?: Scope[];
  expiresAt?: string | null;
  clientIdPrefix?: string;
  apiKeyPrefix?: string;
  allowedCidrs?: string[] | null;
}

/** A grant as its events name it. */
export interface CredentialRef {
  clientId: string;
  organizationId: string;
}

export function authorizationCreatedEvent(options: CredentialOptions = {}): { event: AuthorizationCreated; apiKey: string } {
  const apiKey = generateApiKey(options.apiKeyPrefix ?? 'rsk');
  const event = anEvent(
    EVENT_TYPES.authorizationCreated,
    {
      clientId: generateClientId(options.clientIdPrefix ?? 'rs'),
      organizationId: options.organizationId ?? 'acme',
      recipientType: 'insurance_provider',
      recipientName: null,
      scopes: options.scopes ?? ALL_SCOPES,
      expiresAt: options.expiresAt ?? null,
      keyDigest: digestApiKey(apiKey),
      createdAt: '2026-11-01T00:00:00.000Z',
      revision: 1,
      allowedCidrs: options.allowedCidrs ?? null,
    },
    { source: SOURCE, time: new Date('2026-11-01T00:00:00.000Z') },
  );
  return { event, apiKey };
}

/** Revocations and expiries of the fixtures happen at this instant. */
const ENDED_AT = '2026-11-02T00:00:00.000Z';
const ended = { source: SOURCE, time: new Date(ENDED_AT) };

export function authorizationRevokedEvent({ clientId, organizationId }: CredentialRef, revision = 2): AuthorizationRevoked {
  return anEvent(EVENT_TYPES.authorizationRevoked, { clientId, organizationId, revokedAt: ENDED_AT, revision }, ended);
}

export function authorizationExpiredEvent({ clientId, organizationId }: CredentialRef, revision = 2): AuthorizationExpired {
  return anEvent(EVENT_TYPES.authorizationExpired, { clientId, organizationId, expiredAt: ENDED_AT, revision }, ended);
}

/** acme's score of 2026-11-20, calculated that morning, with `overrides`. */
export function aCalculatedScoreOfAcme(overrides: Partial<CalculatedScore> = {}): CalculatedScore {
  return { ...aCalculatedScore('acme', '2026-11-20'), ...overrides };
}

/** The event of `aCalculatedScoreOfAcme(overrides)`, sent when it was calculated. */
export function scoreCalculatedEvent(overrides: Partial<CalculatedScore> = {}): ScoreCalculated {
  const score = aCalculatedScoreOfAcme(overrides);
  return anEvent(EVENT_TYPES.scoreCalculated, score, { source: SOURCE, time: new Date(score.calculatedAt) });
}
