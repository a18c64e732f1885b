import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { RequestHandler, Response } from 'express';
import { z } from 'zod';
import { env } from './config';
import { ApiError } from './errors';

/** Config for verifying callers' bearer tokens; part of each writing service's config. */
export const callerAuthConfigSchema = z
  .object({
    JWT_HS256_SECRET: env.optionalString().pipe(z.string().min(32, 'must be at least 32 characters').optional()),
    JWT_JWKS_URL: env.optionalString().pipe(z.url().optional()),
    JWT_ISSUER: env.optionalString(),
    JWT_AUDIENCE: env.optionalString(),
  })
  .superRefine((value, ctx) => {
    if (!value.JWT_HS256_SECRET && !value.JWT_JWKS_URL) {
      ctx.addIssue({ code: 'custom', path: ['JWT_JWKS_URL'], message: 'set JWT_JWKS_URL (production) or JWT_HS256_SECRET (development)' });
    }
    if (value.JWT_JWKS_URL && (!value.JWT_ISSUER || !value.JWT_AUDIENCE)) {
      ctx.addIssue({ code: 'custom', path: ['JWT_ISSUER'], message: 'JWT_ISSUER and JWT_AUDIENCE are required with JWT_JWKS_URL' });
    }
  });
export type CallerAuthConfig = z.infer<typeof callerAuthConfigSchema>;

export interface CallerClaims {
  subject: string | undefined;
  organization: string | undefined;
  scopes: ReadonlySet<string>;
  /** The person's or service's issuer: the token's `iss`, or for the console's tokens the signed-in person's own issuer. */
  issuer?: string;
  /** Set when the console called on behalf of the signed-in person (decision 51). */
  via?: 'console';
  /**
   * Decision 54: the token is a service's, not a person's: an OAuth client-credentials token, whose
   * `client_id` or `azp` is its own subject (or whose `gty` says so).
   */
  service?: boolean;
}

export type TokenVerifier = (token: string) => Promise<CallerClaims>;

/**
 * Production verifies asymmetric tokens against the JWKS with issuer and audience; development
 * and tests may also use HS256 tokens signed with a shared secret.
 */
export function createTokenVerifier(config: CallerAuthConfig): TokenVerifier {
  const secret = config.JWT_HS256_SECRET ? new TextEncoder().encode(config.JWT_HS256_SECRET) : undefined;
  const jwks = config.JWT_JWKS_URL ? createRemoteJWKSet(new URL(config.JWT_JWKS_URL)) : undefined;
  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (header.alg === 'HS256' && secret) return secret;
    if (header.alg !== 'HS256' && jwks) return jwks(header, token);
    throw new Error(`tokens signed with ${header.alg ?? 'no algorithm'} are not accepted`);
  };
  return async (token) => {
    const { payload } = await jwtVerify(token, getKey, {
      ...(config.JWT_ISSUER ? { issuer: config.JWT_ISSUER } : {}),
      ...(config.JWT_AUDIENCE ? { audience: config.JWT_AUDIENCE } : {}),
      algorithms: ['HS256', 'RS256', 'PS256', 'ES256', 'EdDSA'],
      requiredClaims: ['exp'],
    });
    return claimsOf(payload);
  };
}

function claimsOf(payload: JWTPayload): CallerClaims {
  // A present but non-string `org` must not read as absent: that would make it a scoring engine's token (decision 34).
  if (payload.org !== undefined && typeof payload.org !== 'string') throw new Error('the org claim must be a string');
  const scope = typeof payload.scope === 'string' ? payload.scope : '';
  return {
    subject: payload.sub,
    organization: typeof payload.org === 'string' ? payload.org : undefined,
    scopes: new Set(scope.split(' ').filter(Boolean)),
    ...(typeof payload.iss === 'string' ? { issuer: payload.iss } : {}),
    service: isServiceToken(payload),
  };
}

/**
 * A client-credentials token names the client as its own subject: `client_id` (RFC 9068) or `azp`
 * (OpenID Connect) equal to `sub`, or Auth0's `gty: "client-credentials"`. A person's token names
 * the person as subject and the client that asked for it apart.
 */
function isServiceToken(payload: JWTPayload): boolean {
  if (payload.gty === 'client-credentials') return true;
  const client = typeof payload.client_id === 'string' ? payload.client_id : typeof payload.azp === 'string' ? payload.azp : undefined;
  return client !== undefined && client === payload.sub;
}

export interface CallerRequirement {
  /** The scope the token must have; of a list, any one (a read that a token for writing may make too). */
  scope: string | readonly string[];
  /** Name of the path parameter that must equal the token's `org` claim. */
  organizationParam?: string;
}

/**
 * `Authorization: <scheme> <token68>`, the scheme matched case-insensitively as HTTP defines it
 * (decision 33): `Bearer`, `bearer` and `BEARER` all work; any other scheme or shape does not.
 */
const BEARER = /^bearer +([A-Za-z0-9._~+/=-]+)$/i;

/** The verified caller, once `requireCaller` let the request through. */
export function callerOf(res: Response): CallerClaims {
  const caller = res.locals.caller as CallerClaims | undefined;
  if (!caller) throw new Error('no verified caller: requireCaller must run first');
  return caller;
}

/** Bearer-token guard: 401 INVALID_TOKEN, then 403 FORBIDDEN_ORGANIZATION, then 403 INSUFFICIENT_SCOPE. */
export function requireCaller(verify: TokenVerifier, requirement: CallerRequirement): RequestHandler {
  return (req, res, next) => {
    const param = requirement.organizationParam ? req.params[requirement.organizationParam] : undefined;
    const organizationId = typeof param === 'string' ? param : undefined;
    checkBearer(verify, req.headers.authorization, requirement, organizationId).then((claims) => {
      res.locals.caller = claims;
      next();
    }, next);
  };
}

/**
 * `requireCaller`'s checks for a handler that reads the organization itself: resolves to the verified
 * claims, or rejects with the same errors in the same order. `organizationId` is checked when the
 * requirement names an organization parameter, or when given.
 */
export async function checkBearer(
  verify: TokenVerifier,
  header: string | undefined,
  requirement: Pick<CallerRequirement, 'scope'> & { organizationParam?: string },
  organizationId: string | undefined,
): Promise<CallerClaims> {
  const challenge = { 'WWW-Authenticate': 'Bearer' };
  const match = typeof header === 'string' ? BEARER.exec(header) : null;
  if (!match?.[1]) throw new ApiError('INVALID_TOKEN', 'An Authorization: Bearer <token> header is required', undefined, challenge);
  let claims: CallerClaims;
  try {
    claims = await verify(match[1]);
  } catch {
    throw new ApiError('INVALID_TOKEN', 'The bearer token is invalid or expired', undefined, challenge);
  }
  // A token without `org` (a scoring engine's, decision 34) administers no organization.
  if (
    (requirement.organizationParam || organizationId !== undefined) &&
    (claims.organization === undefined || claims.organization !== organizationId)
  ) {
    throw new ApiError('FORBIDDEN_ORGANIZATION', 'The token does not administer this organization');
  }
  const scopes: readonly string[] = typeof requirement.scope === 'string' ? [requirement.scope] : requirement.scope;
  if (!scopes.some((scope) => claims.scopes.has(scope))) {
    throw new ApiError('INSUFFICIENT_SCOPE', `The token lacks the scope ${scopes.join(' or ')}`);
  }
  return claims;
}
