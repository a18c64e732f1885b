import { isUtf8 } from 'node:buffer';
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { SECRET_SCANNING_MAX_TOKENS, secretScanningReportSchema, type SecretScanningReport } from '@rsd/contracts';
import { ApiError } from './errors';
import { parsedBody } from './validation';
import type { Logger } from './logger';
import { UnavailableError } from './unavailable';
import type { Clock } from '@rsd/ports';

/** GitHub's list of the keys it signs secret-scanning reports with (`meta/public_keys/secret_scanning`). */
const publicKeysSchema = z.object({
  public_keys: z.array(z.object({ key_identifier: z.string().min(1), key: z.string().min(1), is_current: z.boolean().optional() })),
});

/** The outcome of checking a report's signature. `unknown-key`: the identifier is not in the provider's list, even fetched again. */
export type SignatureCheck = 'valid' | 'invalid' | 'unknown-key';

export interface SecretScanningKeys {
  verify(identifier: string, body: Buffer, signatureBase64: string): Promise<SignatureCheck>;
}

export interface SecretScanningKeysOptions {
  url: string;
  clock: Clock;
  log: Logger;
  /** An unknown identifier fetches the list again at most this often, so no caller can make the service hammer the provider. */
  unknownKeyRefetchMs?: number;
  /** A known identifier's list is fetched again after this long, so a key the provider withdrew stops being trusted. */
  maxAgeMs?: number;
  fetchTimeoutMs?: number;
}

const MINUTE_MS = 60_000;

/**
 * Decision 43: the provider's public keys, fetched on first use and cached by identifier. An unknown
 * identifier fetches the list again once (not more than once a minute, whoever asks), so a key the
 * provider has just added is found; a list older than an hour is fetched again at its next use and,
 * if the provider cannot be reached then, the cached keys keep working. Only ECDSA P-256 keys are taken.
 * The signature is ECDSA with SHA-256 over the raw body, DER-encoded and in base64, checked by Node's
 * own `crypto.verify`.
 */
export function secretScanningKeys(options: SecretScanningKeysOptions): SecretScanningKeys {
  const { url, clock, log, unknownKeyRefetchMs = MINUTE_MS, maxAgeMs = 60 * MINUTE_MS, fetchTimeoutMs = 5000 } = options;
  let keys = new Map<string, KeyObject>();
  let fetchedAt: number | undefined;
  /** The last fetch, successful or not: what limits the fetches an unknown identifier makes. */
  let lastAttempt: { at: number; failure?: unknown } | undefined;
  let fetching: Promise<void> | undefined;

  async function fetchKeys(): Promise<void> {
    let response: Response;
    try {
      response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(fetchTimeoutMs) });
    } catch (error) {
      throw new UnavailableError('secret-scanning key endpoint', { cause: error });
    }
    if (!response.ok) {
      throw new UnavailableError('secret-scanning key endpoint', {
        detail: `the secret-scanning key endpoint answered ${response.status}`,
      });
    }
    const parsed = publicKeysSchema.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success)
      throw new UnavailableError('secret-scanning key endpoint', { detail: 'the secret-scanning key endpoint answered no key list' });
    const next = new Map<string, KeyObject>();
    for (const listed of parsed.data.public_keys) {
      const key = p256KeyOf(listed.key);
      if (key) next.set(listed.key_identifier, key);
      else
        log.warn(
          { keyIdentifier: listed.key_identifier },
          'secret-scanning key endpoint lists a key that is not an ECDSA P-256 public key; ignored',
        );
    }
    keys = next;
    fetchedAt = clock.now().getTime();
    log.info({ keys: next.size }, 'secret-scanning public keys fetched');
  }

  /** One fetch at a time, whoever asks: the others wait for it. */
  function refresh(): Promise<void> {
    fetching ??= fetchKeys()
      .then(
        () => {
          lastAttempt = { at: clock.now().getTime() };
        },
        (error: unknown) => {
          lastAttempt = { at: clock.now().getTime(), failure: error };
          throw error;
        },
      )
      .finally(() => {
        fetching = undefined;
      });
    return fetching;
  }

  const age = () => (fetchedAt === undefined ? Infinity : clock.now().getTime() - fetchedAt);

  async function keyFor(identifier: string): Promise<KeyObject | undefined> {
    const cached = keys.get(identifier);
    if (cached) {
      if (age() >= maxAgeMs) {
        await refresh().catch((error: unknown) => log.warn({ err: error }, 'secret-scanning keys not refreshed; the cached ones are used'));
      }
      return keys.get(identifier) ?? undefined;
    }
    const sinceAttempt = lastAttempt === undefined ? Infinity : clock.now().getTime() - lastAttempt.at;
    if (sinceAttempt >= unknownKeyRefetchMs) await refresh();
    // The provider could not be asked lately: whether the identifier is its key is not known (503, and the provider retries).
    else if (lastAttempt?.failure !== undefined) throw new UnavailableError('secret-scanning key endpoint', { cause: lastAttempt.failure });
    return keys.get(identifier);
  }

  return {
    async verify(identifier, body, signatureBase64) {
      const key = await keyFor(identifier);
      if (!key) return 'unknown-key';
      try {
        return verify('sha256', body, { key, dsaEncoding: 'der' }, Buffer.from(signatureBase64, 'base64')) ? 'valid' : 'invalid';
      } catch {
        // A signature that is no DER at all: no key made it.
        return 'invalid';
      }
    },
  };
}

function p256KeyOf(pem: string): KeyObject | undefined {
  try {
    const key = createPublicKey(pem);
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** The 401 of every report whose signature does not verify: the same words whatever failed, and nothing changes. */
const badSignature = (why: string) =>
  new ApiError('INVALID_SIGNATURE', `The report is not signed by a current secret-scanning key: ${why}`);

/**
 * Decision 43: a secret-scanning report as GitHub sends it. The signature covers the bytes as sent,
 * so it is checked (from the request's `Github-Public-Key-*` headers) before anything reads them; a
 * signed body that is not such a report is refused whole.
 */
export async function signedSecretScanningReport(
  keys: SecretScanningKeys,
  header: (name: string) => string | undefined,
  body: Buffer,
): Promise<SecretScanningReport> {
  const identifier = header('github-public-key-identifier');
  const signature = header('github-public-key-signature');
  if (!identifier || !signature) throw badSignature('Github-Public-Key-Identifier and Github-Public-Key-Signature are required');
  const check = await keys.verify(identifier, body, signature);
  if (check === 'unknown-key') throw badSignature('the key identifier is not one of the provider’s keys');
  if (check === 'invalid') throw badSignature('the signature does not verify');
  let parsed: unknown;
  try {
    if (!isUtf8(body)) throw new Error('not UTF-8');
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ApiError('MALFORMED_JSON', 'The request body is not valid JSON');
  }
  if (Array.isArray(parsed) && parsed.length > SECRET_SCANNING_MAX_TOKENS) {
    throw new ApiError('PAYLOAD_TOO_LARGE', `A report carries at most ${SECRET_SCANNING_MAX_TOKENS} tokens`);
  }
  return parsedBody(secretScanningReportSchema, parsed, 'The body must be an array of { token, type, url, source }');
}
