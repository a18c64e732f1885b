import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import type { SecretSpec } from '@rsd/ports';

export interface DevTokenClaims {
  org?: string;
  scope: string;
  sub?: string;
}

/**
 * Mints an HS256 token with the shared development secret. Only services configured with
 * JWT_HS256_SECRET accept these; production verifies against a JWKS instead.
 */
export async function signDevToken(secret: string, claims: DevTokenClaims, ttl = '12h'): Promise<string> {
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setSubject(claims.sub ?? 'developer')
    .setExpirationTime(ttl)
    .sign(new TextEncoder().encode(secret));
}

export const DEV_SECRET_FILE = 'dev-jwt-secret';

/** The development secret the embedded runtime keeps in its data directory, if it made one. */
export async function readDevSecret(dataDir: string): Promise<string | undefined> {
  try {
    return (await readFile(join(dataDir, DEV_SECRET_FILE), 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * With no JWT configuration, the embedded runtime makes its own HS256 secret once and keeps it in
 * the data directory (never in the repository), so tokens minted by `rsd token` stay valid across
 * restarts.
 */
export async function loadOrCreateDevSecret(dataDir: string): Promise<{ secret: string; created: boolean }> {
  const existing = await readDevSecret(dataDir);
  if (existing) return { secret: existing, created: false };
  const secret = randomBytes(48).toString('base64url');
  await writeFile(join(dataDir, DEV_SECRET_FILE), `${secret}\n`, { mode: 0o600, flag: 'wx' });
  return { secret, created: true };
}

/**
 * The development JWT secret: with neither JWT_HS256_SECRET nor JWT_JWKS_URL set, a runtime with a
 * data directory makes one, so `rsd token` mints tokens that stay valid across restarts. Nowhere else
 * is one made: production verifies against JWT_JWKS_URL.
 */
export const DEV_JWT_SECRET: SecretSpec = {
  variable: 'JWT_HS256_SECRET',
  file: DEV_SECRET_FILE,
  generate: () => randomBytes(48).toString('base64url'),
  unlessSet: ['JWT_JWKS_URL'],
};
