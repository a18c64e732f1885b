import { createHash, sign } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { serializeDictionary, type InnerList, type Item, type Parameters } from 'structured-headers';
import type { SigningKeys } from '@rsd/platform';

const NO_PARAMETERS: Parameters = new Map();
/** What a signature covers (decision 24), in this order: the status, the body's type and digest, and the request's path. */
const COVERED: Item[] = [
  ['@status', NO_PARAMETERS],
  ['content-type', NO_PARAMETERS],
  ['content-digest', NO_PARAMETERS],
  ['@path', new Map([['req', true]])],
];
const LABEL = 'sig1';

export interface SignedHeaders {
  'content-digest': string;
  'signature-input': string;
  signature: string;
}

export interface ResponseToSign {
  status: number;
  contentType: string;
  body: Buffer;
  /** The request's path as it arrived, without the query. */
  requestPath: string;
  created: Date;
}

/** `Content-Digest` (RFC 9530) of a body whose SHA-256 is `sha256`. */
export function contentDigest(sha256: Buffer): string {
  return serializeDictionary(new Map([['sha-256', [sha256, NO_PARAMETERS]]]));
}

export interface SignerOptions {
  /**
   * How long the signature of an unchanged representation (same status, type, body and path) is
   * reused; 0 signs every response. `created` always says when the reused signature was made.
   */
  reuseSeconds: number;
  /** Bounds the memory of reused signatures; the oldest entry makes room. */
  maxReused?: number;
}

/**
 * RFC 9421 with Ed25519 over `@status`, `content-type`, `content-digest` and the request's `@path`.
 * The signature base is built line by line as section 2.5 defines it; the structured fields are
 * serialized by `structured-headers` (RFC 9651), not by hand.
 *
 * An Ed25519 signature costs about as much CPU as the rest of a `/score` request, so a recipient
 * polling an unchanged score gets the signature made for it moments ago (see SignerOptions).
 */
export function createResponseSigner(keys: SigningKeys, { reuseSeconds, maxReused = 10_000 }: SignerOptions) {
  const { kid, privateKey } = keys.active;
  const reused = new LRUCache<string, { createdSeconds: number; headers: SignedHeaders }>({ max: maxReused });

  function signNow(response: ResponseToSign, digest: string, createdSeconds: number): SignedHeaders {
    const params: InnerList = [
      COVERED,
      new Map<string, string | number>([
        ['created', createdSeconds],
        ['keyid', kid],
        ['alg', 'ed25519'],
      ]),
    ];
    const signatureParams = serializeDictionary(new Map([[LABEL, params]]));
    const base = [
      `"@status": ${response.status}`,
      `"content-type": ${response.contentType}`,
      `"content-digest": ${digest}`,
      `"@path";req: ${response.requestPath}`,
      `"@signature-params": ${signatureParams.slice(LABEL.length + 1)}`,
    ].join('\n');
    const signature = sign(null, Buffer.from(base, 'utf8'), privateKey);
    return {
      'content-digest': digest,
      'signature-input': signatureParams,
      signature: serializeDictionary(new Map([[LABEL, [signature, NO_PARAMETERS]]])),
    };
  }

  return {
    /**
     * `once`: the body was made for this request alone (a certificate, issued anew each time): signed
     * afresh and not remembered, so it never pushes out a signature that will be reused.
     */
    sign(
      response: ResponseToSign,
      sha256: Buffer = createHash('sha256').update(response.body).digest(),
      { once = false }: { once?: boolean } = {},
    ): SignedHeaders {
      const now = Math.floor(response.created.getTime() / 1000);
      if (reuseSeconds <= 0 || once) return signNow(response, contentDigest(sha256), now);
      // Keyed by the raw digest: a reused signature costs no structured-header serialisation.
      const key = `${response.status} ${response.contentType}\n${response.requestPath}\n${sha256.toString('base64')}`;
      const hit = reused.get(key);
      if (hit && now - hit.createdSeconds < reuseSeconds && now >= hit.createdSeconds) return hit.headers;
      const headers = signNow(response, contentDigest(sha256), now);
      reused.set(key, { createdSeconds: now, headers });
      return headers;
    },
  };
}
export type ResponseSigner = ReturnType<typeof createResponseSigner>;
