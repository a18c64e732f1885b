import { createHash } from 'node:crypto';
import { CompactSign } from 'jose';
import { CERTIFICATE_JWS_TYPE, type Certificate, type CertificateResource } from '@rsd/contracts';
import type { CredentialView, ScoreView } from '@rsd/domain';
import type { SigningKeys } from '../signing/signing-keys';

/** What a certificate is made of: the grant it is issued to, the score that was the latest on asOf, and when. */
export interface CertificateFacts {
  clientId: string;
  credential: CredentialView;
  score: ScoreView;
  asOf: string;
  issuedAt: Date;
}

/**
 * Decision 55: the certificate of a grant's score on asOf. Pillars only for a grant that also holds
 * pillar_breakdown, as the breakdown itself. Its id is derived from everything else it says (the
 * SHA-256 of that JSON, 128 bits of it), so anyone holding one can recompute it, and two
 * certificates with the same id say the same thing.
 */
export function certificateOf({ clientId, credential, score, asOf, issuedAt }: CertificateFacts): Certificate {
  const withPillars = credential.scopes.includes('pillar_breakdown');
  const eventIds = [score.eventId, credential.createdEventId].filter((id): id is string => id !== undefined);
  const said = {
    organization: { organizationId: credential.organizationId },
    recipient: { clientId, type: credential.recipientType ?? null, name: credential.recipientName ?? null },
    score: score.score,
    grade: score.grade,
    ...(withPillars ? { pillarScores: { ...score.pillarScores } } : {}),
    scoreDate: score.scoreDate,
    calculatedAt: score.calculatedAt,
    asOf,
    issuedAt: issuedAt.toISOString(),
    eventIds,
  };
  const digest = createHash('sha256').update(JSON.stringify(said)).digest();
  return { certificateId: `crt_${digest.subarray(0, 16).toString('base64url')}`, ...said };
}

/**
 * Signs certificates as a compact JWS (RFC 7515) with the active response-signing key (decision 24:
 * EdDSA over Ed25519, its `kid` in the protected header), so that the key set at
 * /.well-known/jwks.json verifies them; every key listed there stays published after it stops signing.
 * The payload is the certificate's JSON as sent, byte for byte.
 */
export function certificateSigner(keys: SigningKeys) {
  const { kid, privateKey } = keys.active;
  return async (certificate: Certificate): Promise<CertificateResource> => {
    const payload = Buffer.from(JSON.stringify(certificate), 'utf8');
    const jws = await new CompactSign(payload).setProtectedHeader({ alg: 'EdDSA', kid, typ: CERTIFICATE_JWS_TYPE }).sign(privateKey);
    return { certificate, jws };
  };
}
export type CertificateSigner = ReturnType<typeof certificateSigner>;
