import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint } from 'jose';
import { z } from 'zod';
import type { SecretSpec } from '@rsd/ports';

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
