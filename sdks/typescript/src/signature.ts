import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { parseDictionary, serializeInnerList, type InnerList, type Item } from 'structured-headers';
import { SignatureError } from './errors.js';
import type { Evidence, Jwks } from './types.js';

// The repository's CLI verifies through this function too (tools/cli/src/response-signature.ts).

/** What the API signs (decision 24); a signature covering less proves less and is refused. */
const REQUIRED = ['@status', 'content-type', 'content-digest', '@path'];

export interface VerifiedEvidence {
  /** The key that signed it, as named in the JWKS. */
  kid: string;
  /** When the signature was made. */
  created: Date;
}

/**
 * Checks a response as received, offline: the body against its Content-Digest (RFC 9530), then the
 * RFC 9421 signature base rebuilt from the covered components against the Ed25519 key that `keyid`
 * names in `jwks` (the document at /.well-known/jwks.json). Throws SignatureError saying why not.
 */
export function verifyEvidence(evidence: Evidence, jwks: Jwks): VerifiedEvidence {
  const { digest, input, signature } = signatureFields(evidence);
  if (!(digest?.[0] instanceof ArrayBuffer)) throw new SignatureError('no sha-256 Content-Digest');
  if (!Buffer.from(digest[0]).equals(createHash('sha256').update(evidence.body).digest())) {
    throw new SignatureError('the body does not match its Content-Digest');
  }
  if (!input || !Array.isArray(input[0]) || !(signature?.[0] instanceof ArrayBuffer))
    throw new SignatureError('no signature labelled sig1');

  const [components, params] = input;
  const names = components.map(([name]) => String(name));
  if (!REQUIRED.every((name) => names.includes(name))) throw new SignatureError(`the signature does not cover ${REQUIRED.join(', ')}`);
  if (params.get('alg') !== 'ed25519') throw new SignatureError('the signature is not Ed25519');
  // BareItem names a DOM type (BufferSource) that Node's types lack: read the values as unknown.
  const kid: unknown = params.get('keyid');
  const jwk = jwks.keys.find((candidate) => candidate.kid === kid);
  if (typeof kid !== 'string' || !jwk) throw new SignatureError(`key "${String(kid)}" is not in the JWKS`);
  const created: unknown = params.get('created');
  if (typeof created !== 'number') throw new SignatureError('the signature has no created time');

  const lines = components.map(([name, componentParams]) => {
    const requestBound = componentParams.get('req') === true;
    const label = `"${String(name)}"${requestBound ? ';req' : ''}`;
    if (name === '@status') return `${label}: ${evidence.status}`;
    if (name === '@path' && requestBound) return `${label}: ${evidence.path}`;
    if (typeof name === 'string' && !name.startsWith('@')) return `${label}: ${evidence.headers[name]?.trim() ?? ''}`;
    throw new SignatureError(`cannot check the component ${label}`);
  });
  // The parameters line is the inner list serialized again (RFC 9421 2.3), whatever else the field holds.
  lines.push(`"@signature-params": ${serializeInnerList(input)}`);

  if (!verify(null, Buffer.from(lines.join('\n'), 'utf8'), publicKey(jwk), Buffer.from(signature[0]))) {
    throw new SignatureError('the signature does not match the response');
  }
  return { kid, created: new Date(created * 1000) };
}

/** The `keyid` the signature names, if it can be read: to know whether the JWKS must be fetched again. */
export function signingKeyId(evidence: Evidence): string | undefined {
  try {
    const keyid: unknown = signatureFields(evidence).input?.[1].get('keyid');
    return typeof keyid === 'string' ? keyid : undefined;
  } catch {
    return undefined;
  }
}

function signatureFields(evidence: Evidence): { digest?: Item; input?: InnerList; signature?: Item } {
  const digestField = evidence.headers['content-digest'];
  const inputField = evidence.headers['signature-input'];
  const signatureField = evidence.headers['signature'];
  if (!digestField || !inputField || !signatureField) throw new SignatureError('the response is not signed');
  try {
    return {
      digest: parseDictionary(digestField).get('sha-256') as Item | undefined,
      input: parseDictionary(inputField).get('sig1') as InnerList | undefined,
      signature: parseDictionary(signatureField).get('sig1') as Item | undefined,
    };
  } catch {
    throw new SignatureError('the signature headers are malformed');
  }
}

function publicKey(jwk: Jwks['keys'][number]): KeyObject {
  try {
    return createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
  } catch {
    throw new SignatureError(`key "${jwk.kid}" is not a usable Ed25519 key`);
  }
}
