import { generateKeyPairSync } from 'node:crypto';
import type { SigningKeys } from '@rsd/platform';
import { EVENT_TYPES, type CalculatedScore } from '@rsd/contracts';
import { READ_VIEWS, digestApiKey, generateApiKey } from '@rsd/domain';
import { type Clock, type ViewStore } from '@rsd/ports';
import { projectEvent } from '@rsd/consumers';
import {
  aCalculatedScoreOfAcme as aCalculatedScore,
  anEvent,
  authorizationCreatedEvent,
  authorizationRevokedEvent,
  scoreCalculatedEvent,
  type CredentialOptions,
  type CredentialRef,
} from '@rsd/testkit';

export {
  ALL_SCOPES,
  aCalculatedScoreOfAcme as aCalculatedScore,
  authorizationCreatedEvent,
  authorizationExpiredEvent,
  authorizationRevokedEvent,
  scoreCalculatedEvent,
  type CredentialOptions,
} from '@rsd/testkit';

// Test support: fills read views through the real projectors with real keys, as the credentials
// and score-ingest services would through the event log.

const SOURCE = '/test/read-api';

export interface IssuedCredential {
  clientId: string;
  apiKey: string;
  organizationId: string;
}

export async function issueCredential(views: ViewStore, options: CredentialOptions = {}): Promise<IssuedCredential> {
  const { event, apiKey } = authorizationCreatedEvent(options);
  await projectEvent(views, READ_VIEWS, event);
  return { clientId: event.data.clientId, apiKey, organizationId: event.data.organizationId };
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
