import type { Express } from 'express';
import { createServiceMetrics } from '@rsd/observability';
import {
  consoleSigner,
  consoleSigningKeyOf,
  createBaseApp,
  finishApp,
  mountApiDocs,
  CONSOLE_JWKS_PATH,
  ConfigError,
  type ConsoleSigner,
  type Logger,
} from '@rsd/platform';
import type { Clock, RunningService } from '@rsd/ports';
import type { ConsoleServiceConfig } from './config';
import { alertWebhookAccess, type AlertWebhookAccess } from './console/alert-webhooks';
import { CONSOLE_PATH, oidcSettingsOf } from './console/console-config';
import { consoleRoutes } from './console/console-routes';
import { createConsoleSessions, SIGN_IN_LINK_ISSUER, type ConsoleSessions } from './console/console-sessions';
import { createOidcSignIn, type OidcSignIn } from './console/oidc-sign-in';
import { CLAIM_PATH, claimPageRoutes } from './claims/claim-page-routes';
import { credentialsApi } from './credentials-api';
import { consoleOpenApi } from '@rsd/api-documents';

export interface ConsoleModuleDeps {
  config: ConsoleServiceConfig;
  clock: Clock;
  log: Logger;
  /** The runner's: the credentials service and the notifier of the same process (the embedded runtime). */
  localUrlOf?: (serviceName: string) => string | undefined;
}

export interface ConsoleModule extends RunningService {
  /**
   * Decision 31: a sign-in link to the console for one organization's administrator, valid once for
   * 10 minutes; the embedded runtime prints one at start. The path and query to append to the console's URL.
   */
  consoleSignInLink: (organizationId: string) => Promise<string>;
}

/** The console: its pages and the claim pages over the APIs, its public keys, and nothing it must keep. */
export function createConsoleModule({ config, clock, log, localUrlOf }: ConsoleModuleDeps): Promise<ConsoleModule> {
  const credentialsUrl = config.CREDENTIALS_URL ?? localUrlOf?.('credentials');
  if (!credentialsUrl)
    throw new ConfigError(['CREDENTIALS_URL: is required: the console manages authorizations through the credentials service']);
  if (!config.CONSOLE_SIGNING_KEY || !config.CONSOLE_SESSION_KEY)
    throw new ConfigError(['CONSOLE_SIGNING_KEY and CONSOLE_SESSION_KEY: are required']);
  const signer = consoleSigner(consoleSigningKeyOf(config.CONSOLE_SIGNING_KEY));
  const sessions = createConsoleSessions(clock, config.CONSOLE_SESSION_KEY);
  const notifierUrl = config.NOTIFIER_URL ?? localUrlOf?.('notifier');
  const app = buildConsoleApp({ config, log, signer, sessions, credentialsUrl, notifierUrl });
  return Promise.resolve({
    app,
    consoleSignInLink: async (organizationId) => {
      const token = await sessions.issueLink({
        organizationId,
        subject: 'one-time-link',
        issuer: SIGN_IN_LINK_ISSUER,
        scope: 'authorizations:write',
        displayName: 'the administrator',
      });
      return `${CONSOLE_PATH}/sign-in/link?token=${token}`;
    },
    stop: () => Promise.resolve(),
  });
}

export interface ConsoleAppDeps {
  config: Pick<
    ConsoleServiceConfig,
    'CONSOLE_PUBLIC_URL' | 'TRUST_PROXY_HOPS' | 'CONSOLE_OIDC_ORGANIZATION_CLAIM' | 'CONSOLE_OIDC_PERMISSIONS_CLAIM'
  > &
    Parameters<typeof oidcSettingsOf>[0];
  log: Logger;
  signer: ConsoleSigner;
  sessions: ConsoleSessions;
  credentialsUrl: string;
  /** Absent: the console does not manage alert webhooks (it says where they are managed instead). */
  notifierUrl: string | undefined;
  /** Stands in for the notifier's client made from `notifierUrl` (tests). */
  alertWebhooks?: AlertWebhookAccess | undefined;
  /** Stands in for the sign-in made from the OpenID Connect settings (tests). */
  oidc?: OidcSignIn | undefined;
}

export function buildConsoleApp(deps: ConsoleAppDeps): Express {
  const { config, log, signer } = deps;
  const app = createBaseApp({
    log,
    trustProxyHops: config.TRUST_PROXY_HOPS,
    operations: { metrics: createServiceMetrics('console'), readiness: [] },
  });
  mountApiDocs(app, consoleOpenApi());
  app.get(CONSOLE_JWKS_PATH, async (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(await signer.jwks());
  });
  const oidcSettings = oidcSettingsOf(config);
  const publicOrigin = config.CONSOLE_PUBLIC_URL ? new URL(config.CONSOLE_PUBLIC_URL).origin : oidcSettings?.redirectUri.origin;
  const credentials = credentialsApi({ url: deps.credentialsUrl, signer, log });
  app.get('/', (_req, res) => res.redirect(303, CONSOLE_PATH));
  app.use(CLAIM_PATH, claimPageRoutes({ credentials, publicOrigin, log }));
  app.use(
    CONSOLE_PATH,
    consoleRoutes({
      credentials,
      sessions: deps.sessions,
      oidc: deps.oidc ?? (oidcSettings && createOidcSignIn(oidcSettings, log)),
      claims: { organizationClaim: config.CONSOLE_OIDC_ORGANIZATION_CLAIM, permissionsClaim: config.CONSOLE_OIDC_PERMISSIONS_CLAIM },
      publicOrigin,
      alertWebhooks:
        deps.alertWebhooks ?? (deps.notifierUrl ? alertWebhookAccess({ notifierUrl: deps.notifierUrl, signer, log }) : undefined),
      log,
    }),
  );
  return finishApp(app, log);
}
