import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, CompactSign } from 'jose';
import { z } from 'zod';
import type { SecretSpec } from '@rsd/ports';
import { env } from './config';

/** An Ed25519 key as a JWK (RFC 8037): `d` is the private part; without it the key is only published. */
export const ed25519JwkSchema = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be the base64url of 32 bytes'),
  d: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43}$/, 'must be the base64url of 32 bytes')
    .optional(),
  kid: z.string().min(1).max(128).optional(),
});
export type Ed25519Jwk = z.infer<typeof ed25519JwkSchema>;

/** The first key signs; every key is published, so a key being retired (or not yet used) still verifies. */
export const signingKeyListSchema = z
  .array(ed25519JwkSchema)
  .min(1)
  .max(8)
  .refine((keys) => keys[0]?.d !== undefined, 'the first key signs, so it needs its private part "d"');

/** What the JWKS publishes of a key (decision 24). */
export interface PublishedKey {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

export interface SigningKeys {
  /** The key that signs, with its kid. */
  active: { kid: string; privateKey: KeyObject };
  /** Every key's public part, for `/.well-known/jwks.json`. */
  published: PublishedKey[];
}

/** A key's id when none is given: its RFC 7638 thumbprint, stable and derived from the public key alone. */
async function kidOf(jwk: Ed25519Jwk): Promise<string> {
  return jwk.kid ?? calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }, 'sha256');
}

export async function signingKeysFrom(jwks: readonly Ed25519Jwk[]): Promise<SigningKeys> {
  const published = await Promise.all(
    jwks.map(async (jwk): Promise<PublishedKey> => ({
      kty: 'OKP',
      crv: 'Ed25519',
      x: jwk.x,
      kid: await kidOf(jwk),
      alg: 'EdDSA',
      use: 'sig',
    })),
  );
  const [first] = jwks;
  if (!first?.d) throw new Error('the first signing key needs its private part');
  let privateKey: KeyObject;
  try {
    // Node checks that `d` and `x` are one key pair: a mismatch would sign what nobody can verify.
    privateKey = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x: first.x, d: first.d }, format: 'jwk' });
  } catch {
    throw new Error('the first signing key\'s "d" does not match its "x": they are not one Ed25519 key pair');
  }
  return { active: { kid: published[0]!.kid, privateKey }, published };
}

/**
 * Decision 24's keys: RESPONSE_SIGNING_KEYS, or on the embedded runtime generated into the data
 * directory on first start and read from there afterwards. The file holds the same JWK list the
 * variable takes.
 */
export const SIGNING_KEYS_SECRET: SecretSpec = {
  variable: 'RESPONSE_SIGNING_KEYS',
  file: 'response-signing-keys.json',
  generate: () => {
    const { x, d } = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
    return JSON.stringify([ed25519JwkSchema.parse({ kty: 'OKP', crv: 'Ed25519', x, d })]);
  },
  requiredBecause: 'every replica must sign with the same published keys',
};

/** A JSON array of Ed25519 JWKs; a problem is named by its path, never by echoing the value (it holds private keys). */
export const signingKeyList = () =>
  env.optionalString().transform((raw, ctx) => {
    if (raw === undefined) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON array of Ed25519 JWKs (kty OKP, crv Ed25519, x, d)' });
      return z.NEVER;
    }
    const keys = signingKeyListSchema.safeParse(parsed);
    if (!keys.success) {
      const problems = keys.error.issues.map((issue) => `${issue.path.join('.') || 'the list'} ${issue.message}`).join('; ');
      ctx.addIssue({ code: 'custom', message: `must be a JSON array of Ed25519 JWKs: ${problems}` });
      return z.NEVER;
    }
    return keys.data;
  });

/**
 * Signs a document as a compact JWS (RFC 7515) with the active response-signing key (decision 24:
 * EdDSA over Ed25519, its `kid` in the protected header, `typ` saying what it is), so that the key
 * set at the read API's /.well-known/jwks.json verifies it; every key listed there stays published
 * after it stops signing. The payload is the document's JSON as sent, byte for byte. Certificates
 * (decision 55) and access reviews' reports (decision 54) are signed by it.
 */
export function compactJwsSigner(keys: SigningKeys, typ: string) {
  const { kid, privateKey } = keys.active;
  return async <T>(document: T): Promise<{ document: T; jws: string }> => {
    const payload = Buffer.from(JSON.stringify(document), 'utf8');
    const jws = await new CompactSign(payload).setProtectedHeader({ alg: 'EdDSA', kid, typ }).sign(privateKey);
    return { document, jws };
  };
}
