import { generateKeyPairSync } from 'node:crypto';
import type { SigningKeys } from '../signing/signing-keys';
import {
  EVENT_TYPES,
  type AuthorizationCreated,
  type AuthorizationExpired,
  type AuthorizationRevoked,
  type CalculatedScore,
  type Scope,
  type ScoreCalculated,
} from '@rsd/contracts';
import { READ_VIEWS, digestApiKey, generateApiKey, generateClientId } from '@rsd/domain';
import { type Clock, type ViewStore } from '@rsd/ports';
import { projectEvent } from '@rsd/consumers';
import { aCalculatedScore as aCalculatedScoreOf, anEvent } from '@rsd/testkit';

/**
 * Test support: fills read views through the real projectors with real keys, as the credentials
 * and score-ingest services would through the event log.
 */
const SOURCE = '/test/read-api';

export interface IssuedCredential {
  clientId: string;
  apiKey: string;
  organizationId: string;
}

type CredentialRef = Pick<IssuedCredential, 'clientId' | 'organizationId'>;

export interface CredentialOptions {
  organizationId?: string;
  scopes?: Scope[];
  expiresAt?: string | null;
  clientIdPrefix?: string;
  apiKeyPrefix?: string;
  allowedCidrs?: string[] | null;
}

export const ALL_SCOPES: Scope[] = ['qr_score', 'pillar_breakdown', 'score_trend'];

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

export async function issueCredential(views: ViewStore, options: CredentialOptions = {}): Promise<IssuedCredential> {
  const { event, apiKey } = authorizationCreatedEvent(options);
  await projectEvent(views, READ_VIEWS, event);
  return { clientId: event.data.clientId, apiKey, organizationId: event.data.organizationId };
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

/** Decision 19: a new key for the credential; the one it had works until `previousKeyExpiresAt` (null: not at all). */
export async function rotateCredential(
  views: ViewStore,
  credential: IssuedCredential,
  previousKeyExpiresAt: string | null,
  revision = 2,
): Promise<IssuedCredential> {
  const apiKey = generateApiKey('rsk');
  await projectEvent(
    views,
    READ_VIEWS,
    anEvent(
      EVENT_TYPES.authorizationKeyRotated,
      {
        clientId: credential.clientId,
        organizationId: credential.organizationId,
        keyDigest: digestApiKey(apiKey),
        previousKeyDigest: previousKeyExpiresAt === null ? null : digestApiKey(credential.apiKey),
        previousKeyExpiresAt,
        rotatedAt: '2026-11-03T00:00:00.000Z',
        revision,
      },
      { source: SOURCE, time: new Date('2026-11-03T00:00:00.000Z') },
    ),
  );
  return { ...credential, apiKey };
}

export async function revokeCredential(views: ViewStore, credential: CredentialRef): Promise<void> {
  await projectEvent(views, READ_VIEWS, authorizationRevokedEvent(credential));
}

/** acme's score of 2026-11-20, calculated that morning, with `overrides`. */
export function aCalculatedScore(overrides: Partial<CalculatedScore> = {}): CalculatedScore {
  return { ...aCalculatedScoreOf('acme', '2026-11-20'), ...overrides };
}

/** The event of `aCalculatedScore(overrides)`, sent when it was calculated. */
export function scoreCalculatedEvent(overrides: Partial<CalculatedScore> = {}): ScoreCalculated {
  const score = aCalculatedScore(overrides);
  return anEvent(EVENT_TYPES.scoreCalculated, score, { source: SOURCE, time: new Date(score.calculatedAt) });
}

export async function recordScore(views: ViewStore, overrides: Partial<CalculatedScore> = {}): Promise<CalculatedScore> {
  const score = aCalculatedScore(overrides);
  await projectEvent(views, READ_VIEWS, scoreCalculatedEvent(score));
  return score;
}

/** A clock that stands still until a test moves it. */
export function testClock(start = '2026-11-21T08:00:00.000Z'): Clock & { set(iso: string): void } {
  let now = new Date(start);
  return {
    now: () => new Date(now),
    set: (iso) => {
      now = new Date(iso);
    },
  };
}

/** A fresh Ed25519 signing key for an app under test, published under the kid `test-key`. */
export function testSigningKeys(kid = 'test-key'): SigningKeys {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const { x } = publicKey.export({ format: 'jwk' });
  return { active: { kid, privateKey }, published: [{ kty: 'OKP', crv: 'Ed25519', x: x!, kid, alg: 'EdDSA', use: 'sig' }] };
}
