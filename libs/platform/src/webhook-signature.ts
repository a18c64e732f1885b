import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// Standard Webhooks signing (decision 27): `webhook-signature: v1,<base64 HMAC-SHA256 over
// "{id}.{timestamp}.{body}">`, keyed with the bytes a `whsec_` secret encodes. On node:crypto rather
// than the `standardwebhooks` package: that one brings a pure-JavaScript SHA-256 and base64 of its
// own, and its verifier reads the wall clock with a fixed tolerance; this is as short, and is tested
// against the reference implementation's own vector.

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** 256 bits; the specification asks for 24 to 64 bytes. */
const NEW_SECRET_BYTES = 32;
const SECRET_BYTES = { min: 24, max: 64 } as const;

export const WEBHOOK_HEADERS = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const;

/** Against replays: the reference implementation's default. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

export interface WebhookMessage {
  /** The `webhook-id`: the same on every retry; never contains a `.` (it delimits the signed content). */
  id: string;
  /** The `webhook-timestamp`: whole seconds since the epoch, of this attempt. */
  timestamp: number;
  /** The exact bytes sent: a signature covers the body as serialized, not as parsed. */
  body: string | Uint8Array;
}

/** `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(NEW_SECRET_BYTES).toString('base64');
}

/** `v1,<signature>`; throws on a malformed id, timestamp or secret, which are the sender's own mistakes. */
export function signWebhook(message: WebhookMessage & { secret: string }): string {
  if (!/^[^.\s]+$/.test(message.id)) throw new Error('a webhook id must be non-empty, without "." or spaces');
  if (!Number.isSafeInteger(message.timestamp) || message.timestamp < 0) throw new Error('a webhook timestamp must be whole seconds');
  return `v1,${signatureOf(message, secretKey(message.secret))}`;
}

/**
 * The three headers of a delivery. With `alsoSignedWith` (the previous secret during a rotation's
 * overlap), the signature header carries one signature per secret, space-separated, the current one
 * first, as Standard Webhooks allows: a receiver that still has the old secret verifies as well as one
 * that has the new one.
 */
export function webhookHeaders(message: WebhookMessage & { secret: string; alsoSignedWith?: readonly string[] }): Record<string, string> {
  const { alsoSignedWith = [], ...signed } = message;
  return {
    [WEBHOOK_HEADERS.id]: message.id,
    [WEBHOOK_HEADERS.timestamp]: String(message.timestamp),
    [WEBHOOK_HEADERS.signature]: [signed.secret, ...alsoSignedWith].map((secret) => signWebhook({ ...signed, secret })).join(' '),
  };
}

export interface ReceivedWebhook {
  /** The headers as received; undefined when absent. */
  id: string | undefined;
  timestamp: string | undefined;
  /** One or more space-separated `<version>,<signature>`, as during a secret rotation. */
  signature: string | undefined;
  body: string | Uint8Array;
}

export type WebhookVerification =
  | { outcome: 'verified'; id: string; timestamp: number }
  | { outcome: 'refused'; reason: 'missing-header' | 'invalid-header' | 'timestamp-outside-tolerance' | 'no-matching-signature' };

/**
 * A recipient's check: the timestamp within the tolerance of `now` (either side), and any `v1`
 * signature matching, compared in constant time. Throws only on a malformed secret (configuration).
 */
export function verifyWebhook(
  received: ReceivedWebhook,
  secret: string,
  options: { now: Date; toleranceSeconds?: number },
): WebhookVerification {
  const key = secretKey(secret);
  const { id, timestamp, signature, body } = received;
  if (!id || !timestamp || !signature) return { outcome: 'refused', reason: 'missing-header' };
  if (!/^[^.\s]+$/.test(id) || !/^\d{1,15}$/.test(timestamp)) return { outcome: 'refused', reason: 'invalid-header' };
  const seconds = Number(timestamp);
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (Math.abs(Math.floor(options.now.getTime() / 1000) - seconds) > tolerance) {
    return { outcome: 'refused', reason: 'timestamp-outside-tolerance' };
  }
  const expected = Buffer.from(signatureOf({ id, timestamp: seconds, body }, key));
  const matches = signature.split(' ').some((candidate) => {
    const comma = candidate.indexOf(',');
    if (comma < 0 || candidate.slice(0, comma) !== 'v1') return false;
    const presented = Buffer.from(candidate.slice(comma + 1));
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  });
  return matches ? { outcome: 'verified', id, timestamp: seconds } : { outcome: 'refused', reason: 'no-matching-signature' };
}

function signatureOf(message: WebhookMessage, key: Buffer): string {
  return createHmac('sha256', key).update(`${message.id}.${message.timestamp}.`).update(message.body).digest('base64');
}

/** The key bytes; the base64 must be canonical, so that one secret has one spelling. */
function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : undefined;
  const key = encoded === undefined ? undefined : Buffer.from(encoded, 'base64');
  if (!key || key.toString('base64') !== encoded || key.length < SECRET_BYTES.min || key.length > SECRET_BYTES.max) {
    throw new Error(
      `not a webhook secret: expected ${WEBHOOK_SECRET_PREFIX} and the base64 of ${SECRET_BYTES.min} to ${SECRET_BYTES.max} bytes`,
    );
  }
  return key;
}
