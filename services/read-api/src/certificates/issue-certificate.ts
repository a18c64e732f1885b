import { createHash } from 'node:crypto';
import { CERTIFICATE_JWS_TYPE, type Certificate, type CertificateResource } from '@rsd/contracts';
import type { CredentialView, ScoreView } from '@rsd/domain';
import { compactJwsSigner, type SigningKeys } from '@rsd/platform';

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

/** Decision 55: certificates are signed as compact JWS with the response-signing keys (`compactJwsSigner`). */
export function certificateSigner(keys: SigningKeys) {
  const sign = compactJwsSigner(keys, CERTIFICATE_JWS_TYPE);
  return async (certificate: Certificate): Promise<CertificateResource> => {
    const { jws } = await sign(certificate);
    return { certificate, jws };
  };
}
export type CertificateSigner = ReturnType<typeof certificateSigner>;
