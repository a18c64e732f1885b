import { createHash, createPublicKey, verify } from 'node:crypto';
import { parseDictionary, serializeInnerList, type InnerList, type Item } from 'structured-headers';

/** A key as `/.well-known/jwks.json` publishes it. */
export interface PublishedKey {
  kty: string;
  crv: string;
  x: string;
  kid: string;
}

export interface ReceivedResponse {
  status: number;
  headers: Headers;
  body: Buffer;
  /** The path the request was sent to, without the query. */
  requestPath: string;
}

export type Verification = { valid: true; kid: string; created: Date } | { valid: false; reason: string };

/** What the Resilience Score API signs (decision 24); a signature covering less proves less and is refused. */
const REQUIRED = ['@status', 'content-type', 'content-digest', '@path'];

/**
 * Checks a response's RFC 9421 signature the way a recipient would, from the message as received:
 * the body against Content-Digest (RFC 9530), then the signature base rebuilt from the covered
 * components (RFC 9421 2.5) against the published Ed25519 key named by `keyid`.
 */
export function verifyResponseSignature(response: ReceivedResponse, keys: readonly PublishedKey[]): Verification {
  const refuse = (reason: string): Verification => ({ valid: false, reason });
  const digestField = response.headers.get('content-digest');
  const inputField = response.headers.get('signature-input');
  const signatureField = response.headers.get('signature');
  if (!digestField || !inputField || !signatureField) return refuse('the response is not signed');

  let digest: Item | undefined;
  let input: InnerList | undefined;
  let signature: Item | undefined;
  try {
    digest = parseDictionary(digestField).get('sha-256') as Item | undefined;
    input = parseDictionary(inputField).get('sig1') as InnerList | undefined;
    signature = parseDictionary(signatureField).get('sig1') as Item | undefined;
  } catch {
    return refuse('the signature headers are malformed');
  }
  if (!digest || !(digest[0] instanceof ArrayBuffer)) return refuse('no sha-256 Content-Digest');
  if (!Buffer.from(digest[0]).equals(createHash('sha256').update(response.body).digest())) {
    return refuse('the body does not match its Content-Digest');
  }
  if (!input || !Array.isArray(input[0]) || !signature || !(signature[0] instanceof ArrayBuffer))
    return refuse('no signature labelled sig1');

  const [components, params] = input;
  const names = components.map(([name]) => String(name));
  if (!REQUIRED.every((name) => names.includes(name))) return refuse(`the signature does not cover ${REQUIRED.join(', ')}`);
  if (params.get('alg') !== 'ed25519') return refuse('the signature is not Ed25519');
  const kid: unknown = params.get('keyid');
  const key = keys.find((candidate) => candidate.kid === kid);
  if (typeof kid !== 'string' || !key) return refuse(`key "${String(kid)}" is not among the published keys`);
  const created: unknown = params.get('created');
  if (typeof created !== 'number') return refuse('the signature has no created time');

  const lines: string[] = [];
  for (const [name, componentParams] of components) {
    const requestBound = componentParams.get('req') === true;
    const label = `"${String(name)}"${requestBound ? ';req' : ''}`;
    if (name === '@status') lines.push(`${label}: ${response.status}`);
    else if (name === '@path' && requestBound) lines.push(`${label}: ${response.requestPath}`);
    else if (typeof name === 'string' && !name.startsWith('@')) lines.push(`${label}: ${response.headers.get(name)?.trim() ?? ''}`);
    else return refuse(`cannot check the component ${label}`);
  }
  // The signature parameters line is the inner list serialized again (RFC 9421 2.3), whatever else the field holds.
  lines.push(`"@signature-params": ${serializeInnerList(input)}`);

  let publicKey;
  try {
    publicKey = createPublicKey({ key: { kty: key.kty, crv: key.crv, x: key.x }, format: 'jwk' });
  } catch {
    return refuse(`key "${kid}" is not a usable Ed25519 key`);
  }
  if (!verify(null, Buffer.from(lines.join('\n'), 'utf8'), publicKey, Buffer.from(signature[0]))) {
    return refuse('the signature does not match the response');
  }
  return { valid: true, kid, created: new Date(created * 1000) };
}
