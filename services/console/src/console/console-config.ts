import { z } from 'zod';
import { env, secretsFromFiles } from '@rsd/platform';
import { isLoopbackHost, type OidcSettings } from './oidc-sign-in';

export const CONSOLE_PATH = '/console';
/** Where the identity provider sends the browser back: a path of this service. */
export const CALLBACK_PATH = `${CONSOLE_PATH}/auth/callback`;

/** Decision 15's organization claim, and the usual name of a permissions claim (Auth0's, among others). */
export const DEFAULT_CLAIMS = { organizationClaim: 'org', permissionsClaim: 'permissions' } as const;

const secureUrl = env.optionalString().pipe(
  z
    .url()
    .refine((value) => {
      // zod runs a refinement even after z.url() refused the value: one that does not parse is reported there.
      if (!URL.canParse(value)) return true;
      const url = new URL(value);
      return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
    }, 'must be an https URL (plain http only on loopback)')
    .optional(),
);

/** The console's secrets that are none of the runner's (no SecretSpec: nothing to make when absent), also read from `<VARIABLE>_FILE`. */
const SECRETS_FROM_FILES = ['CONSOLE_OIDC_CLIENT_SECRET'] as const;

/**
 * Decision 31: sign-in to the console by OpenID Connect against the organization's identity provider.
 * None of it set: the console has no OpenID Connect sign-in (the embedded runtime prints a one-time link).
 */
const oidcConfigSchema = z
  .object({
    CONSOLE_OIDC_ISSUER: secureUrl,
    CONSOLE_OIDC_CLIENT_ID: env.optionalString(),
    /** From the environment, or the file CONSOLE_OIDC_CLIENT_SECRET_FILE names (a mounted Secret); never from the repository. */
    CONSOLE_OIDC_CLIENT_SECRET: env.optionalString(),
    CONSOLE_OIDC_REDIRECT_URI: secureUrl.refine(
      (value) => value === undefined || !URL.canParse(value) || new URL(value).pathname === CALLBACK_PATH,
      `must end in ${CALLBACK_PATH}`,
    ),
    CONSOLE_OIDC_SCOPE: env.string('openid profile email'),
    /** The claim naming the organization the person administers (decision 15's `org`). */
    CONSOLE_OIDC_ORGANIZATION_CLAIM: env.string(DEFAULT_CLAIMS.organizationClaim),
    /** The claim listing what the person may do (an array or a space-separated string); must hold `authorizations:write`. */
    CONSOLE_OIDC_PERMISSIONS_CLAIM: env.string(DEFAULT_CLAIMS.permissionsClaim),
  })
  .superRefine((value, ctx) => {
    if (!value.CONSOLE_OIDC_ISSUER) {
      // Half a configuration is a mistake to report, not a sign-in quietly left off.
      for (const name of ['CONSOLE_OIDC_CLIENT_ID', 'CONSOLE_OIDC_CLIENT_SECRET', 'CONSOLE_OIDC_REDIRECT_URI'] as const) {
        if (value[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'is set but CONSOLE_OIDC_ISSUER is not' });
      }
      return;
    }
    for (const name of ['CONSOLE_OIDC_CLIENT_ID', 'CONSOLE_OIDC_CLIENT_SECRET', 'CONSOLE_OIDC_REDIRECT_URI'] as const) {
      if (!value[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'is required with CONSOLE_OIDC_ISSUER' });
    }
  });

/**
 * Decision 53: every secret may come from a file, as orchestrators mount them. The file is read before
 * anything looks at the variable it sets, as the runtime's engine secrets are (runtime-config.ts): both
 * set, an unreadable or an empty file is a problem naming the variable and the path, never the content.
 */
export const consoleConfigSchema = z.preprocess((input, ctx) => {
  if (typeof input !== 'object' || input === null) return input;
  const { env: resolved, problems } = secretsFromFiles(input as NodeJS.ProcessEnv, SECRETS_FROM_FILES);
  for (const { variable, message } of problems) ctx.addIssue({ code: 'custom', path: [variable], message });
  return resolved;
}, oidcConfigSchema);
export type ConsoleConfig = z.infer<typeof consoleConfigSchema>;

export function oidcSettingsOf(config: ConsoleConfig): OidcSettings | undefined {
  const { CONSOLE_OIDC_ISSUER: issuer, CONSOLE_OIDC_CLIENT_ID: clientId, CONSOLE_OIDC_CLIENT_SECRET: clientSecret } = config;
  const redirectUri = config.CONSOLE_OIDC_REDIRECT_URI;
  if (!issuer || !clientId || !clientSecret || !redirectUri) return undefined;
  return { issuer: new URL(issuer), clientId, clientSecret, redirectUri: new URL(redirectUri), scope: config.CONSOLE_OIDC_SCOPE };
}
