import { randomBytes } from 'node:crypto';
import { decodeJwt, jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import type { SecretSpec } from '@rsd/ports';
import { env } from './config';
import type { CallerClaims, TokenVerifier } from './caller-auth';

/**
 * The console manages an organization's alert webhooks on the notifier for the person signed in to it.
 * The console holds no token of that person's identity provider (a one-time link signs in with none),
 * so it presents one of its own: signed with a secret the credentials service and the notifier share,
 * naming the signed-in organization, valid for a minute, and accepted by the notifier for that
 * organization's webhooks only.
 */
export const CONSOLE_ISSUER = 'rsd-console';
export const CONSOLE_AUDIENCE = 'rsd-notifier';
const LIFETIME_SECONDS = 60;

export const consoleDelegationConfigShape = {
  /** Shared by the credentials service and the notifier; at least 32 characters. Unset: the console does not manage alert webhooks. */
  CONSOLE_NOTIFIER_SECRET: env.optionalString().pipe(z.string().min(32, 'must be at least 32 characters').optional()),
};

/** The embedded runtime makes one into its data directory, so `npm start`'s console manages alert webhooks with no set-up. */
export const CONSOLE_NOTIFIER_SECRET: SecretSpec = {
  variable: 'CONSOLE_NOTIFIER_SECRET',
  file: 'console-notifier-secret',
  generate: () => randomBytes(48).toString('base64url'),
};

/** A minute's token for the notifier, for one organization's alert webhooks, on behalf of `subject`. */
export async function signConsoleToken(secret: string, claims: { organizationId: string; subject: string }): Promise<string> {
  return new SignJWT({ org: claims.organizationId, scope: 'authorizations:write' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(CONSOLE_ISSUER)
    .setAudience(CONSOLE_AUDIENCE)
    .setSubject(claims.subject)
    .setIssuedAt()
    .setExpirationTime(`${LIFETIME_SECONDS}s`)
    .sign(new TextEncoder().encode(secret));
}

/**
 * `verify`, and beside it the console's tokens when a secret is configured: a token that names the
 * console as its issuer is checked against that secret alone (issuer, audience, a lifetime of at most
 * a minute), never against the callers' keys, and the other way round.
 */
export function withConsoleTokens(verify: TokenVerifier, secret: string | undefined): TokenVerifier {
  if (!secret) return verify;
  const key = new TextEncoder().encode(secret);
  return async (token) => {
    if (issuerOf(token) !== CONSOLE_ISSUER) return verify(token);
    const { payload } = await jwtVerify(token, key, {
      issuer: CONSOLE_ISSUER,
      audience: CONSOLE_AUDIENCE,
      algorithms: ['HS256'],
      requiredClaims: ['exp', 'iat', 'org'],
      maxTokenAge: `${LIFETIME_SECONDS}s`,
    });
    if (typeof payload.org !== 'string') throw new Error('the org claim must be a string');
    const claims: CallerClaims = {
      subject: payload.sub,
      organization: payload.org,
      scopes: new Set(typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : []),
    };
    return claims;
  };
}

/** The unverified issuer, only to choose the key: whichever key is chosen then verifies the whole token. */
function issuerOf(token: string): string | undefined {
  try {
    return decodeJwt(token).iss;
  } catch {
    return undefined;
  }
}

/**
 * For a configuration's `superRefine`: the console's secret must not be the callers' development
 * secret, or a console token (a minute, one organization) would pass wherever callers' tokens do.
 */
export function refuseSharedConsoleSecret(
  value: { JWT_HS256_SECRET?: string | undefined; CONSOLE_NOTIFIER_SECRET?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if (value.CONSOLE_NOTIFIER_SECRET !== undefined && value.CONSOLE_NOTIFIER_SECRET === value.JWT_HS256_SECRET) {
    ctx.addIssue({ code: 'custom', path: ['CONSOLE_NOTIFIER_SECRET'], message: 'must differ from JWT_HS256_SECRET' });
  }
}
