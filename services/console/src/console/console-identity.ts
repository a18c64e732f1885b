import { organizationIdSchema } from '@rsd/contracts';
import type { ConsoleIdentity } from './console-sessions';
import type { SignedInClaims } from './oidc-sign-in';

/** The permission decision 15 asks of a caller that manages authorizations; the console asks the same. */
export const MANAGE_PERMISSION = 'authorizations:write';
/** The person's permissions that are scopes of the APIs the console calls for them (decision 51): its tokens carry these. */
const API_SCOPES = new Set(['authorizations:write', 'authorizations:read']);

export type IdentityOutcome = { outcome: 'signed-in'; identity: ConsoleIdentity } | { outcome: 'refused'; reason: string };

/**
 * Decision 31: the identity provider's claims mapped to decision 15's organization and permission.
 * Anything missing or malformed refuses the sign-in (fail closed).
 */
export function identityOf(claims: SignedInClaims, names: { organizationClaim: string; permissionsClaim: string }): IdentityOutcome {
  const organization = claims[names.organizationClaim];
  if (typeof organization !== 'string' || !organizationIdSchema.safeParse(organization).success) {
    return { outcome: 'refused', reason: `Your account names no organization (claim "${names.organizationClaim}").` };
  }
  if (!permissionsOf(claims[names.permissionsClaim]).includes(MANAGE_PERMISSION)) {
    return { outcome: 'refused', reason: `Your account may not manage authorizations (it lacks "${MANAGE_PERMISSION}").` };
  }
  const name = [claims.name, claims.email, claims.preferred_username].find((value) => typeof value === 'string' && value.length > 0);
  return {
    outcome: 'signed-in',
    identity: {
      organizationId: organization,
      subject: claims.sub,
      issuer: typeof claims.iss === 'string' ? claims.iss : '',
      scope: permissionsOf(claims[names.permissionsClaim])
        .filter((permission) => API_SCOPES.has(permission))
        .join(' '),
      displayName: typeof name === 'string' ? name.slice(0, 200) : claims.sub,
    },
  };
}

function permissionsOf(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ');
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}
