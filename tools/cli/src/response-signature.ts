import { SignatureError, verifyEvidence } from '@resilience-score/client';

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

/**
 * The SDK names a key missing from the JWKS in its own words; the CLI has always said "among the
 * published keys" (as the Python SDK does), and its output stays as it was.
 */
const SDK_UNKNOWN_KEY = /^(key ".*") is not in the JWKS$/s;

/**
 * Checks a response's RFC 9421 signature the way a recipient would, from the message as received,
 * with the TypeScript SDK's verifier (verifyEvidence): the body against Content-Digest (RFC 9530),
 * then the signature base rebuilt from the covered components (RFC 9421 2.5) against the published
 * Ed25519 key named by `keyid`. A refusal is a value with the SDK's reason.
 */
export function verifyResponseSignature(response: ReceivedResponse, keys: readonly PublishedKey[]): Verification {
  try {
    const { kid, created } = verifyEvidence(
      // Headers iterates lowercase names, repeated fields joined: what `headers.get(name)` gives.
      { status: response.status, path: response.requestPath, headers: Object.fromEntries(response.headers), body: response.body },
      { keys: [...keys] },
    );
    return { valid: true, kid, created };
  } catch (error) {
    if (!(error instanceof SignatureError)) throw error;
    return { valid: false, reason: error.message.replace(SDK_UNKNOWN_KEY, '$1 is not among the published keys') };
  }
}
