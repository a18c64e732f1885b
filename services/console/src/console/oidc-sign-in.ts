import type * as OpenIdClient from 'openid-client' with { 'resolution-mode': 'import' };
import type { Logger } from '@rsd/platform';
import type { SignInAttempt } from './console-sessions';

export interface OidcSettings {
  issuer: URL;
  clientId: string;
  clientSecret: string;
  /** The callback's public URL, registered with the identity provider: `…/console/auth/callback`. */
  redirectUri: URL;
  scope: string;
}

/** The claims of the person who signed in: the ID token's, completed by the UserInfo endpoint's. */
export type SignedInClaims = Record<string, unknown> & { sub: string };

export interface OidcSignIn {
  /** Where to send the browser, and what the callback must find again to finish. */
  begin(): Promise<{ url: URL; attempt: SignInAttempt }>;
  /** Code for tokens (PKCE, state, nonce, ID token signature, issuer, audience and expiry all checked by openid-client). */
  finish(callbackQuery: string, attempt: SignInAttempt): Promise<SignedInClaims>;
}

/**
 * Decision 31: authorization code with PKCE against the configured issuer, by openid-client (the
 * relying party is the library's, not ours). Discovery happens at the first sign-in and again after
 * a failed one, so the service starts while the identity provider is away. Plain http is allowed
 * only for an issuer on loopback (tests, a local provider); anywhere else it must be https.
 */
export function createOidcSignIn(settings: OidcSettings, log: Logger): OidcSignIn {
  let discovered: Promise<{ client: typeof OpenIdClient; config: OpenIdClient.Configuration }> | undefined;
  const configuration = () => {
    discovered ??= discover(settings).catch((error: unknown) => {
      discovered = undefined;
      log.warn({ err: error, issuer: settings.issuer.href }, 'OpenID Connect discovery failed; the next sign-in tries again');
      throw error;
    });
    return discovered;
  };

  return {
    async begin() {
      const { client, config } = await configuration();
      const attempt = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: settings.redirectUri.href,
        scope: settings.scope,
        response_type: 'code',
        code_challenge: await client.calculatePKCECodeChallenge(attempt.codeVerifier),
        code_challenge_method: 'S256',
        state: attempt.state,
        nonce: attempt.nonce,
      });
      return { url, attempt };
    },
    async finish(callbackQuery, attempt) {
      const { client, config } = await configuration();
      // The callback URL as registered, with the query the browser brought: never built from the Host header.
      const currentUrl = new URL(settings.redirectUri.href);
      currentUrl.search = callbackQuery;
      const tokens = await client.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: attempt.codeVerifier,
        expectedState: attempt.state,
        expectedNonce: attempt.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw new Error('the token response carried no ID token');
      // Providers put custom claims in the ID token, the UserInfo response or both.
      const userInfo = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
      return { ...userInfo, ...idClaims };
    },
  };
}

async function discover(settings: OidcSettings): Promise<{ client: typeof OpenIdClient; config: OpenIdClient.Configuration }> {
  // openid-client is an ES module; loaded when sign-in by OpenID Connect is configured and first used.
  const client = await import('openid-client');
  const insecure = settings.issuer.protocol === 'http:' && isLoopbackHost(settings.issuer.hostname);
  const config = await client.discovery(settings.issuer, settings.clientId, settings.clientSecret, undefined, {
    ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
    timeout: 10,
  });
  return { client, config };
}

export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '::1' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}
