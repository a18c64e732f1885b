import { CONSOLE_SIGNING_KEY, consoleKeysOf, consoleSigner, consoleSigningKeyOf, createLogger, type ConsoleSigner } from '@rsd/platform';
import { startApp, type RunningApp } from '@rsd/testkit';
// The console's tests run it against the real credentials service (its own harness, over the embedded adapters).
import { startCredentials, type CredentialsHarness, type CredentialsHarnessOptions } from '../../../../test/support/credentials-harness';
import type { AlertWebhookAccess } from '../console/alert-webhooks';
import { DEFAULT_CLAIMS } from '../console/console-config';
import type { OidcSignIn } from '../console/oidc-sign-in';
import { CONSOLE_SESSION_KEY, createConsoleSessions, SIGN_IN_LINK_ISSUER, type ConsoleSessions } from '../console/console-sessions';
import { buildConsoleApp } from '../console-module';

export interface ConsoleHarness extends Omit<CredentialsHarness, 'app'> {
  /** The console, on a port of its own. */
  app: RunningApp;
  /** The credentials service it calls. */
  credentials: RunningApp;
  sessions: ConsoleSessions;
  signer: ConsoleSigner;
  /** The key its sessions are sealed with: another console with it opens them (a replica). */
  sessionKey: string;
  /** Another console process with the same keys, against the same credentials service: a replica (closed with the rest). */
  startReplica(): Promise<RunningApp>;
  /** A one-time sign-in link's token for an administrator of `organizationId` (scope authorizations:write), shown as `displayName`. */
  signInLink(organizationId: string, displayName?: string): Promise<string>;
}

export interface ConsoleHarnessOptions extends Omit<CredentialsHarnessOptions, 'console'> {
  alertWebhooks?: AlertWebhookAccess | undefined;
  /** The console's origin as people reach it (behind a proxy that gives it another Host). */
  publicUrl?: string;
  /** Seal sessions with this key (default: a new one). */
  sessionKey?: string;
  oidc?: OidcSignIn;
}

/**
 * The console over HTTP against the real credentials service, which verifies its tokens with its
 * public key only; sessions on the credentials harness's clock.
 */
export async function startConsole(options: ConsoleHarnessOptions = {}): Promise<ConsoleHarness> {
  const signer = consoleSigner(consoleSigningKeyOf(CONSOLE_SIGNING_KEY.generate()));
  const sessionKey = options.sessionKey ?? CONSOLE_SESSION_KEY.generate();
  const h = await startCredentials({
    ...options,
    console: { keys: consoleKeysOf(await signer.jwks()), ...(options.publicUrl ? { url: options.publicUrl } : {}) },
  });
  /** One console process: each seals and opens with the same key but remembers on its own. */
  const consoleProcess = (sessions: ConsoleSessions) =>
    startApp(
      buildConsoleApp({
        config: {
          CONSOLE_PUBLIC_URL: options.publicUrl,
          TRUST_PROXY_HOPS: 0,
          CONSOLE_OIDC_ORGANIZATION_CLAIM: DEFAULT_CLAIMS.organizationClaim,
          CONSOLE_OIDC_PERMISSIONS_CLAIM: DEFAULT_CLAIMS.permissionsClaim,
          CONSOLE_OIDC_SCOPE: 'openid',
          CONSOLE_OIDC_ISSUER: undefined,
          CONSOLE_OIDC_CLIENT_ID: undefined,
          CONSOLE_OIDC_CLIENT_SECRET: undefined,
          CONSOLE_OIDC_REDIRECT_URI: undefined,
        },
        log: options.log ?? createLogger('console', 'silent'),
        signer,
        sessions,
        credentialsUrl: h.app.baseUrl,
        notifierUrl: undefined,
        alertWebhooks: options.alertWebhooks,
        oidc: options.oidc,
      }),
    );
  const sessions = createConsoleSessions(h.clock, sessionKey);
  const app = await consoleProcess(sessions);
  const replicas: RunningApp[] = [];
  return {
    ...h,
    app,
    credentials: h.app,
    sessions,
    signer,
    sessionKey,
    signInLink: (organizationId, displayName = 'x') =>
      sessions.issueLink({
        organizationId,
        subject: 'one-time-link',
        issuer: SIGN_IN_LINK_ISSUER,
        scope: 'authorizations:write',
        displayName,
      }),
    startReplica: async () => {
      const started = await consoleProcess(createConsoleSessions(h.clock, sessionKey));
      // Closed by the test (a replica lost) or with the rest, once.
      const replica: RunningApp = {
        ...started,
        close: () => {
          replicas.splice(replicas.indexOf(replica), 1);
          return started.close();
        },
      };
      replicas.push(replica);
      return replica;
    },
    close: async () => {
      for (const replica of [...replicas]) await replica.close();
      await app.close();
      await h.close();
    },
  };
}
