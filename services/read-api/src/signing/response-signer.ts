import { createHash, sign } from 'node:crypto';
import { serializeDictionary, type InnerList, type Item, type Parameters } from 'structured-headers';
import type { SigningKeys } from './signing-keys';

/** What a signature covers (decision 24), in this order: the status, the body's type and digest, and the request's path. */
const NO_PARAMETERS: Parameters = new Map();
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

/**
 * RFC 9421 with Ed25519 over `@status`, `content-type`, `content-digest` and the request's `@path`.
 * The signature base is built line by line as section 2.5 defines it; the structured fields are
 * serialized by `structured-headers` (RFC 9651), not by hand.
 */
export function createResponseSigner(keys: SigningKeys) {
  const { kid, privateKey } = keys.active;
  return {
    sign(response: ResponseToSign, sha256: Buffer = createHash('sha256').update(response.body).digest()): SignedHeaders {
      const digest = contentDigest(sha256);
      const params: InnerList = [
        COVERED,
        new Map<string, string | number>([
          ['created', Math.floor(response.created.getTime() / 1000)],
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
    },
  };
}
export type ResponseSigner = ReturnType<typeof createResponseSigner>;
