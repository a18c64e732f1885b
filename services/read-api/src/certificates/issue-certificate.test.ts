import { createHash, generateKeyPairSync } from 'node:crypto';
import { compactVerify, importJWK } from 'jose';
import { certificateSchema, CERTIFICATE_JWS_TYPE } from '@rsd/contracts';
import type { CredentialView, ScoreView } from '@rsd/domain';
import { aCalculatedScore, anActiveCredentialView } from '@rsd/testkit';
import { signingKeysFrom } from '@rsd/platform';
import { certificateOf, certificateSigner } from './issue-certificate';

const score: ScoreView = { ...aCalculatedScore('acme', '2026-11-20'), eventId: 'score-event' };
const grant = (scopes: CredentialView['scopes']): CredentialView =>
  anActiveCredentialView({
    clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
    organizationId: 'acme',
    keyDigest: 'a'.repeat(64),
    scopes,
    recipientType: 'auditor',
    recipientName: 'Example Audit',
    createdEventId: 'created-event',
  });
const facts = (scopes: CredentialView['scopes']) => ({
  clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA',
  credential: grant(scopes),
  score,
  asOf: '2026-11-25',
  issuedAt: new Date('2026-12-02T06:00:00.000Z'),
});

describe('a certificate (decision 55)', () => {
  test('when it is made, then it names the organization, the recipient, the score and its events, with an id derived from all that', () => {
    const certificate = certificateOf(facts(['qr_score']));

    expect(certificateSchema.parse(certificate)).toEqual(certificate);
    expect(certificate).toMatchObject({
      organization: { organizationId: 'acme' },
      recipient: { clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA', type: 'auditor', name: 'Example Audit' },
      score: score.score,
      grade: score.grade,
      scoreDate: '2026-11-20',
      calculatedAt: score.calculatedAt,
      asOf: '2026-11-25',
      issuedAt: '2026-12-02T06:00:00.000Z',
      eventIds: ['score-event', 'created-event'],
    });
    const { certificateId, ...said } = certificate;
    expect(certificateId).toBe(`crt_${createHash('sha256').update(JSON.stringify(said)).digest().subarray(0, 16).toString('base64url')}`);
  });

  test('when the grant holds pillar_breakdown, then the pillars are in it, and otherwise not', () => {
    expect(certificateOf(facts(['qr_score'])).pillarScores).toBeUndefined();
    expect(certificateOf(facts(['qr_score', 'pillar_breakdown'])).pillarScores).toEqual(score.pillarScores);
  });

  test('when it is signed, then the JWS verifies with the published key its kid names and its payload is the certificate, byte for byte', async () => {
    const { x, d } = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
    const keys = await signingKeysFrom([{ kty: 'OKP', crv: 'Ed25519', x: x!, d: d!, kid: 'signing-key' }]);
    const certificate = certificateOf(facts(['qr_score']));

    const { jws } = await certificateSigner(keys)(certificate);

    const published = keys.published[0]!;
    const verified = await compactVerify(jws, await importJWK(published, 'EdDSA'));
    expect(verified.protectedHeader).toEqual({ alg: 'EdDSA', kid: 'signing-key', typ: CERTIFICATE_JWS_TYPE });
    expect(Buffer.from(verified.payload).toString('utf8')).toBe(JSON.stringify(certificate));
  });
});
