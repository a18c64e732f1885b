import { createPublicKey, verify } from 'node:crypto';
import { SignatureError } from './errors.js';
import type { Certificate, Jwks } from './types.js';

/** What a certificate's JWS says in its protected header as `typ` (decision 55). */
export const CERTIFICATE_JWS_TYPE = 'rsd-certificate+json';

/** What an access review's report's JWS says as `typ` (decision 54). */
export const ACCESS_REVIEW_REPORT_JWS_TYPE = 'rsd-access-review-report+json';

/** What a refusal calls a document of each `typ` asked for alone. */
const SIGNED_KINDS: Record<string, string> = {
  [CERTIFICATE_JWS_TYPE]: 'a certificate',
  [ACCESS_REVIEW_REPORT_JWS_TYPE]: "an access review's report",
};

export interface VerifiedCertificate {
  /** What the JWS says: the certificate, read from the signed payload itself. */
  certificate: Certificate;
  /** The key that signed it, as named in the key set. */
  kid: string;
}

/**
 * Checks a certificate's compact JWS (RFC 7515) offline against a key set saved from the read API's
 * /.well-known/jwks.json (a key retired from signing stays there, so a certificate verifies years
 * later): EdDSA over Ed25519 only, with the key its `kid` names. Every part must be canonical
 * base64url, so no changed character goes unnoticed. Throws SignatureError saying why not; no network.
 */
export function verifyCertificate(jws: string, keySet: Jwks): VerifiedCertificate {
  const { payload, kid } = verifySignedJws(jws, keySet, [CERTIFICATE_JWS_TYPE]);
  return { certificate: payload as Certificate, kid };
}

/** What a signed document's JWS says, once checked: its payload as JSON, the key that signed it, and its `typ`. */
export interface VerifiedJws {
  payload: unknown;
  kid: string;
  typ: string | undefined;
}

/**
 * Checks any document the service signs with its response-signing keys (a certificate, an access
 * review's report) as `verifyCertificate` does, its `typ` one of `types` (or absent).
 */
export function verifySignedJws(jws: string, keySet: Jwks, types: readonly string[]): VerifiedJws {
  const parts = jws.trim().split('.');
  if (parts.length !== 3) throw new SignatureError('not a compact JWS (three base64url parts joined by dots)');
  const [headerPart, payloadPart, signaturePart] = parts.map(canonicalBase64url) as [Buffer, Buffer, Buffer];
  const header = jsonOf(headerPart, 'header') as { alg?: unknown; kid?: unknown; typ?: unknown; crit?: unknown };
  if (header.alg !== 'EdDSA') throw new SignatureError(`the JWS is not EdDSA (alg ${JSON.stringify(header.alg)})`);
  if (header.crit !== undefined) throw new SignatureError('the JWS names critical header parameters this client does not know');
  if (header.typ !== undefined && (typeof header.typ !== 'string' || !types.includes(header.typ)))
    throw new SignatureError(
      `the JWS is not ${(types.length === 1 && SIGNED_KINDS[types[0]!]) || 'a document this client verifies'} (typ ${JSON.stringify(header.typ)})`,
    );
  const jwk = keySet.keys.find((candidate) => candidate.kid === header.kid);
  if (typeof header.kid !== 'string' || !jwk) throw new SignatureError(`key "${String(header.kid)}" is not in the key set`);
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') throw new SignatureError(`key "${header.kid}" is not an Ed25519 key`);
  let valid: boolean;
  try {
    const publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
    valid = verify(null, Buffer.from(`${parts[0]}.${parts[1]}`, 'ascii'), publicKey, signaturePart);
  } catch {
    throw new SignatureError(`key "${header.kid}" is not a usable Ed25519 key`);
  }
  if (!valid) throw new SignatureError('the signature does not match the signed document');
  return { payload: jsonOf(payloadPart, 'payload'), kid: header.kid, typ: header.typ };
}

/** base64url without padding, and only in its one canonical spelling (a changed unused bit is refused too). */
function canonicalBase64url(part: string): Buffer {
  const bytes = Buffer.from(part, 'base64url');
  if (!/^[A-Za-z0-9_-]+$/.test(part) || bytes.toString('base64url') !== part)
    throw new SignatureError('the JWS is not canonical base64url');
  return bytes;
}

function jsonOf(bytes: Buffer, what: string): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    throw new SignatureError(`the JWS ${what} is not JSON`);
  }
}
