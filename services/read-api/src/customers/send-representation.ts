import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { LRUCache } from 'lru-cache';
import type { Clock } from '@rsd/ports';
import type { ResponseSigner, SignedHeaders } from '../signing/response-signer';

const CONTENT_TYPE = 'application/json; charset=utf-8';

/** A representation's bytes and what is derived from them alone. */
interface Representation {
  body: Buffer;
  sha256: Buffer;
  etag: string;
}

const REMEMBERED = 1024;
const REMEMBERED_BODY_MAX_BYTES = 1024;
/** Client IDs remembered per view document: the grants one organization has given that read it. */
const REMEMBERED_PER_DOCUMENT = 64;

/**
 * What a body is made of, and nothing else: which resource it is, the view document it was read from
 * and the Client ID it echoes. The view stores never change a document they have handed out (a new
 * state is a new object; the embedded store freezes them), so while the same document is read, the
 * same resource for the same Client ID is the same body.
 */
export interface MadeOf {
  resource: string;
  document: object;
  clientId: string;
}

/**
 * Representations recently sent, by their JSON text: a recipient polling an unchanged score gets the
 * bytes, digest and ETag made for it before, without encoding and hashing them again. Small bodies
 * only (a score, a breakdown, a short history page), so the cache stays within about 2 MiB; the one
 * sent least recently makes room.
 */
function representationCache() {
  const remembered = new LRUCache<string, Representation>({ max: REMEMBERED });
  const byJson = (json: string): Representation => {
    const known = remembered.get(json);
    if (known) return known;
    const body = Buffer.from(json, 'utf8');
    const sha256 = createHash('sha256').update(body).digest();
    const representation = { body, sha256, etag: `"${sha256.toString('base64url')}"` };
    if (body.length <= REMEMBERED_BODY_MAX_BYTES) remembered.set(json, representation);
    return representation;
  };
  // A document read again is the object the store handed out before: its body is found without
  // encoding it to JSON first. Gone with the document, when the store drops it.
  const byResource = new Map<string, WeakMap<object, Map<string, Representation>>>();
  return (resource: unknown, madeOf: MadeOf | undefined): Representation => {
    if (!madeOf) return byJson(JSON.stringify(resource));
    let byDocument = byResource.get(madeOf.resource);
    if (!byDocument) byResource.set(madeOf.resource, (byDocument = new WeakMap()));
    let ofDocument = byDocument.get(madeOf.document);
    const known = ofDocument?.get(madeOf.clientId);
    if (known) return known;
    const representation = byJson(JSON.stringify(resource));
    if (!ofDocument) byDocument.set(madeOf.document, (ofDocument = new Map<string, Representation>()));
    if (ofDocument.size < REMEMBERED_PER_DOCUMENT) ofDocument.set(madeOf.clientId, representation);
    return representation;
  };
}

/**
 * Sends a customer resource (decisions 23 and 24): a strong ETag from the body's SHA-256; a 304
 * without a body when `If-None-Match` matches it; otherwise the body with its Content-Digest and
 * signature. The headers set before (Cache-Control, the rate limit's) go out either way. `once`: a
 * body issued for this request alone (a certificate), whose signature is never reused.
 */
export function representationSender(signer: ResponseSigner, clock: Clock) {
  const representationOf = representationCache();
  return (req: Request, res: Response, resource: unknown, madeOf?: MadeOf, { once = false }: { once?: boolean } = {}): void => {
    const { body, sha256, etag } = representationOf(resource, madeOf);
    res.setHeader('ETag', etag);
    if (noneMatch(req.headers['if-none-match'], etag)) {
      res.status(304).end();
      return;
    }
    const response = { status: 200, contentType: CONTENT_TYPE, body, requestPath: pathOf(req), created: clock.now() };
    const signed = signer.sign(response, sha256, { once });
    res.setHeader('Content-Type', CONTENT_TYPE);
    setSignatureHeaders(res, signed);
    res.status(200).send(body);
  };
}

/**
 * Sends a body made for this request alone (a certificate's PDF): signed as every read is, with its
 * Content-Digest, but no ETag: it is issued anew each time, so it never matches an earlier one.
 */
export function bytesSender(signer: ResponseSigner, clock: Clock) {
  return (req: Request, res: Response, body: Buffer, contentType: string): void => {
    const response = { status: 200, contentType, body, requestPath: pathOf(req), created: clock.now() };
    const signed = signer.sign(response, undefined, { once: true });
    res.setHeader('Content-Type', contentType);
    setSignatureHeaders(res, signed);
    res.status(200).send(body);
  };
}

/** Empty only from the benchmark's unsigned baseline (bench/src/unsigned-read-api.ts): nothing is sent then. */
function setSignatureHeaders(res: Response, signed: SignedHeaders): void {
  const headers = [
    ['Content-Digest', signed['content-digest']],
    ['Signature-Input', signed['signature-input']],
    ['Signature', signed.signature],
  ] as const;
  for (const [name, value] of headers) if (value) res.setHeader(name, value);
}

/** `@path`: the path as the client sent it (still percent-encoded), without the query. */
function pathOf(req: Request): string {
  const target = req.originalUrl;
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

/**
 * RFC 9110 13.1.2: `*`, or any listed entity tag equal to ours by the weak comparison. Not express's
 * `req.fresh`: it ignores If-None-Match when the request says `Cache-Control: no-cache`, which every
 * fetch() client adds to a conditional request, so they would never get their 304.
 */
function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  for (const [tag] of header.matchAll(/(?:W\/)?"[^"]*"/g)) {
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}
