import { createHmac, timingSafeEqual } from 'node:crypto';
import { SignatureError } from './errors.js';
import type { WebhookPayload } from './types.js';

// Standard Webhooks as the notifier signs it (libs/platform/src/webhook-signature.ts in the
// repository), repeated here because this package is installed alone.

/** Against replays: the Standard Webhooks reference implementation's default. */
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

/** A fetch `Headers`, or Node's `request.headers`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, either side. Default 300. */
  toleranceSeconds?: number;
  now?: Date;
}

/**
 * Checks a delivery: `webhook-timestamp` within the tolerance, and a `v1` signature in
 * `webhook-signature` that matches the HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed
 * with the secret's bytes. `body` must be the raw body as received, not a re-serialized parse.
 * Returns the payload; throws SignatureError.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): WebhookPayload {
  const key = secretKey(secret);
  const id = headerOf(headers, 'webhook-id');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  const signatures = headerOf(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new SignatureError('a webhook-id, webhook-timestamp or webhook-signature header is missing');
  if (!/^\d{1,15}$/.test(timestamp)) throw new SignatureError('webhook-timestamp is not whole seconds');
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) {
    throw new SignatureError('webhook-timestamp is outside the tolerance');
  }

  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64'));
  // Several space-separated signatures during a secret rotation; any v1 one may match.
  const matches = signatures.split(' ').some((candidate) => {
    const [version, signature] = candidate.split(',', 2);
    const presented = Buffer.from(signature ?? '');
    return version === 'v1' && presented.length === expected.length && timingSafeEqual(presented, expected);
  });
  if (!matches) throw new SignatureError('no signature matches this secret');
  return JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)) as WebhookPayload;
}

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/** `whsec_` and the base64 of the key's bytes. */
function secretKey(secret: string): Buffer {
  if (!secret.startsWith('whsec_')) throw new TypeError('a webhook secret starts with whsec_');
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  if (key.length === 0) throw new TypeError('the webhook secret holds no key');
  return key;
}
