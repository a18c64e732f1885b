import { generateKeyPairSync } from 'node:crypto';
import { createResponseSigner } from '../../../services/read-api/src/signing/response-signer';
import { verifyResponseSignature, type PublishedKey, type ReceivedResponse } from './response-signature';

const CONTENT_TYPE = 'application/json; charset=utf-8';
const REQUEST_PATH = '/v1/customers/rs_A/score';
const CREATED = new Date(Date.UTC(2026, 10, 23, 12, 0, 0));

/** A response as the read API signs it, and the JWKS entry of the key that signed it. */
function aSignedResponse(kid = 'key-1'): { response: ReceivedResponse; published: PublishedKey } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const { x } = publicKey.export({ format: 'jwk' });
  const signer = createResponseSigner({ active: { kid, privateKey }, published: [] }, { reuseSeconds: 0 });
  const body = Buffer.from('{"score":72}');
  const signed = signer.sign({ status: 200, contentType: CONTENT_TYPE, body, requestPath: REQUEST_PATH, created: CREATED });
  return {
    response: { status: 200, headers: new Headers({ 'content-type': CONTENT_TYPE, ...signed }), body, requestPath: REQUEST_PATH },
    published: { kty: 'OKP', crv: 'Ed25519', x: x!, kid },
  };
}

describe('rsd --verify', () => {
  test('when a response is signed by a published key, then it is valid, with that key and the time it was signed', () => {
    const { response, published } = aSignedResponse();

    expect(verifyResponseSignature(response, [published])).toEqual({ valid: true, kid: 'key-1', created: CREATED });
  });

  test('when the signing key is not published, then the reason names it in the CLI’s words', () => {
    const { response } = aSignedResponse();
    const { published: other } = aSignedResponse('key-2');

    expect(verifyResponseSignature(response, [other])).toEqual({ valid: false, reason: 'key "key-1" is not among the published keys' });
  });

  test('when the body was changed on the way, or the response is not signed, then it is refused and says why', () => {
    const { response, published } = aSignedResponse();

    expect(verifyResponseSignature({ ...response, body: Buffer.from('{"score":99}') }, [published])).toEqual({
      valid: false,
      reason: 'the body does not match its Content-Digest',
    });
    expect(verifyResponseSignature({ ...response, headers: new Headers({ 'content-type': CONTENT_TYPE }) }, [published])).toEqual({
      valid: false,
      reason: 'the response is not signed',
    });
  });
});
