import { SignJWT } from 'jose';

export const TEST_JWT_SECRET = 'test-secret-that-is-at-least-32-characters-long';

/** A real HS256 JWT, as development and tests accept. */
export async function signToken(
  claims: { org?: string; scope?: string; sub?: string; client_id?: string; azp?: string },
  options: { secret?: string; expiresIn?: string; issuer?: string; audience?: string } = {},
): Promise<string> {
  let jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? '10m');
  if (options.issuer) jwt = jwt.setIssuer(options.issuer);
  if (options.audience) jwt = jwt.setAudience(options.audience);
  return jwt.sign(new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET));
}
