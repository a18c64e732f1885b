import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface OidcIssuer {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * A real OpenID Connect provider (oidc-provider) in a child process on loopback; see oidc-provider-server.mjs
 * for its logins. The client is registered with exactly this redirect URI.
 */
export async function startOidcIssuer(client: { clientId: string; clientSecret: string; redirectUri: string }): Promise<OidcIssuer> {
  const child = spawn(process.execPath, [join(__dirname, 'oidc-provider-server.mjs')], {
    env: {
      ...process.env,
      ISSUER_CLIENT_ID: client.clientId,
      ISSUER_CLIENT_SECRET: client.clientSecret,
      ISSUER_REDIRECT_URI: client.redirectUri,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((done) => child.once('close', () => done()));
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`the OpenID Connect issuer did not start:\n${output}`)), 20_000);
    const poll = setInterval(() => {
      const found = /^ISSUER (\S+)$/m.exec(output)?.[1];
      if (found) {
        clearInterval(poll);
        clearTimeout(timer);
        done(found);
      }
    }, 25);
    void exited.then(() => {
      clearInterval(poll);
      clearTimeout(timer);
      fail(new Error(`the OpenID Connect issuer exited:\n${output}`));
    });
  });
  return {
    url,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
