import { generateKeyPairSync } from 'node:crypto';
import { CompactSign, importJWK } from 'jose';
import {
  ACCESS_REVIEW_REPORT_JWS_TYPE,
  CERTIFICATE_JWS_TYPE,
  SignatureError,
  verifyCertificate,
  verifySignedJws,
  type Certificate,
} from '@resilience-score/client';
import { aCertificate } from '@rsd/testkit';

/**
 * verifyCertificate against JWSs made by jose (an implementation independent of the SDK's), offline:
 * the certificate the payload says, under the key its kid names; any changed character refused.
 */

function aKey(kid: string) {
  const { x, d } = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  return { kid, signing: { kty: 'OKP', crv: 'Ed25519', x, d }, published: { kty: 'OKP', crv: 'Ed25519', x: x!, kid } };
}

// The product's certificate, typed as the SDK declares it: the two must agree.
const certificate: Certificate = aCertificate({
  recipient: { clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA', type: 'auditor', name: 'Müller & Søn Audit' },
  eventIds: ['f3b1c2d4-0000-4000-8000-000000000001', 'f3b1c2d4-0000-4000-8000-000000000002'],
});

async function signed(key: ReturnType<typeof aKey>, header: Record<string, unknown> = {}, payload: unknown = certificate): Promise<string> {
  return new CompactSign(Buffer.from(JSON.stringify(payload)))
    .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'rsd-certificate+json', ...header })
    .sign(await importJWK(key.signing, 'EdDSA'));
}

describe('verifyCertificate', () => {
  const current = aKey('key-2');
  const retired = aKey('key-1');
  const keySet = { keys: [current.published, retired.published] };

  test('when the JWS was signed by a key of the set, current or retired, then it says the certificate and which key', async () => {
    expect(verifyCertificate(await signed(current), keySet)).toEqual({ certificate, kid: 'key-2' });
    expect(verifyCertificate(await signed(retired), keySet)).toEqual({ certificate, kid: 'key-1' });
  });

  test('when any one character of the JWS is changed, then it is refused', async () => {
    const jws = await signed(current);
    const refused = [...jws].flatMap((character, at) => {
      if (character === '.') return [];
      const changed = `${jws.slice(0, at)}${character === 'A' ? 'B' : 'A'}${jws.slice(at + 1)}`;
      try {
        verifyCertificate(changed, keySet);
        return [at];
      } catch (error) {
        expect(error).toBeInstanceOf(SignatureError);
        return [];
      }
    });
    expect(refused).toEqual([]);
  });

  test("when the key is not in the set, the algorithm is not EdDSA's or the JWS is not compact, then it is refused saying so", async () => {
    expect(() => verifyCertificate('not.a-jws', keySet)).toThrow(SignatureError);
    const unknown = await signed(aKey('key-3'));
    expect(() => verifyCertificate(unknown, keySet)).toThrow(/key "key-3" is not in the key set/);
    const forged = (await signed(current)).split('.');
    const none = Buffer.from(JSON.stringify({ alg: 'none', kid: 'key-2' })).toString('base64url');
    expect(() => verifyCertificate(`${none}.${forged[1]}.`, keySet)).toThrow(SignatureError);
    const notACertificate = await signed(current, { typ: 'JWT' });
    expect(() => verifyCertificate(notACertificate, keySet)).toThrow(/not a certificate/);
  });
});

describe("verifySignedJws (decision 54: an access review's report, signed as certificates are)", () => {
  const key = aKey('key-1');
  const keySet = { keys: [key.published] };
  const report = { reviewId: 'arv_AAAAAAAAAAAAAAAAAAAAAAAA', items: [] };

  test('when a report is signed by a key of the set, then it verifies as a report and not as a certificate', async () => {
    const jws = await signed(key, { typ: ACCESS_REVIEW_REPORT_JWS_TYPE }, report);

    expect(verifySignedJws(jws, keySet, [ACCESS_REVIEW_REPORT_JWS_TYPE, CERTIFICATE_JWS_TYPE])).toEqual({
      payload: report,
      kid: 'key-1',
      typ: ACCESS_REVIEW_REPORT_JWS_TYPE,
    });
    expect(() => verifyCertificate(jws, keySet)).toThrow(SignatureError);
  });

  test('when a byte of its payload is changed, then it is refused', async () => {
    const [header, payload, signature] = (await signed(key, { typ: ACCESS_REVIEW_REPORT_JWS_TYPE }, report)).split('.') as [
      string,
      string,
      string,
    ];
    const bytes = Buffer.from(payload, 'base64url');
    bytes[2] = bytes[2]! ^ 0x01;

    expect(() => verifySignedJws(`${header}.${bytes.toString('base64url')}.${signature}`, keySet, [ACCESS_REVIEW_REPORT_JWS_TYPE])).toThrow(
      'the signature does not match the signed document',
    );
  });
});
