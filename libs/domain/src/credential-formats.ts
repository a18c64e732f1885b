import { hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 43 base62 characters carry 256.03 bits. */
export const KEY_BODY_LENGTH = 43;
/** 6 base62 characters hold any 32-bit CRC. */
export const CHECKSUM_LENGTH = 6;
/** 24 base62 characters carry 142 bits, over the 96 the decisions ask for. */
const CLIENT_ID_BODY_LENGTH = 24;

function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += BASE62[randomInt(62)];
  return out;
}

function base62(value: number, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, '0');
}

function checksumOf(text: string): string {
  return base62(crc32(text), CHECKSUM_LENGTH);
}

export function generateClientId(prefix: string): string {
  return `${prefix}_${randomBase62(CLIENT_ID_BODY_LENGTH)}`;
}

/** `<prefix>_<43 random base62><6 base62 CRC32>`, GitHub-token style: typos are caught without any lookup. */
export function generateApiKey(prefix: string): string {
  const payload = `${prefix}_${randomBase62(KEY_BODY_LENGTH)}`;
  return payload + checksumOf(payload);
}

export function hasValidChecksum(key: string, prefix: string): boolean {
  if (key.length !== prefix.length + 1 + KEY_BODY_LENGTH + CHECKSUM_LENGTH) return false;
  if (!key.startsWith(`${prefix}_`)) return false;
  const payload = key.slice(0, -CHECKSUM_LENGTH);
  if (!/^[0-9A-Za-z]+$/.test(payload.slice(prefix.length + 1))) return false;
  return checksumOf(payload) === key.slice(-CHECKSUM_LENGTH);
}

/** The keys carry 256 random bits, so a fast unsalted hash is already infeasible to invert. */
export function digestApiKey(key: string): string {
  // The one-shot form: about 4× cheaper than createHash on the read path, where every request digests its key.
  return hash('sha256', key, 'hex');
}

/** digestApiKey's digest as its 32 bytes, for the request path's constant-time comparison. */
export function apiKeyDigestBytes(key: string): Buffer {
  // Through hex: the one-shot hash's 'buffer' output costs twice as much as hex and its decoding.
  return Buffer.from(hash('sha256', key, 'hex'), 'hex');
}

/** Constant-time comparison of two hex digests. */
export function digestsMatch(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** Decision 38: 32 random bytes, base64url (43 characters, 256 bits; the decision asks for 128). */
export function generateClaimToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The shape of a token this service issues: anything else is unknown without a lookup. */
export const CLAIM_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Like a key, a token carries 256 random bits: its SHA-256 is all that is kept. */
export function digestClaimToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Decision 54: an access review's id, `arv_` and 24 random base62 characters. */
export function generateAccessReviewId(): string {
  return `arv_${randomBase62(24)}`;
}
