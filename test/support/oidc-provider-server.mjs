// A real OpenID Connect provider (oidc-provider) on loopback, for the console's browser tests: started
// as a child process by test/support/oidc-issuer.ts (oidc-provider is an ES module; jest runs CommonJS).
//
// Its development login form takes any login and password. The login decides the claims:
//   admin@<org>    org=<org>, permissions=["authorizations:write"]    (may use the console)
//   viewer@<org>   org=<org>, permissions=[]                           (refused by the console)
// Configuration from the environment: ISSUER_CLIENT_ID, ISSUER_CLIENT_SECRET, ISSUER_REDIRECT_URI.
// Prints one line, `ISSUER <url>`, once it listens.
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const { ISSUER_CLIENT_ID, ISSUER_CLIENT_SECRET, ISSUER_REDIRECT_URI } = process.env;
if (!ISSUER_CLIENT_ID || !ISSUER_CLIENT_SECRET || !ISSUER_REDIRECT_URI) {
  process.stderr.write('ISSUER_CLIENT_ID, ISSUER_CLIENT_SECRET and ISSUER_REDIRECT_URI are required\n');
  process.exit(2);
}

const server = createServer();
await new Promise((listening) => server.listen(0, '127.0.0.1', listening));
const issuer = `http://127.0.0.1:${server.address().port}`;

function claimsOf(login) {
  const [role, org] = login.split('@');
  return {
    sub: login,
    name: `Test ${role}`,
    email: login.includes('.') ? login : `${login}.example`,
    org,
    permissions: role === 'admin' ? ['authorizations:write'] : [],
  };
}

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: ISSUER_CLIENT_ID,
      client_secret: ISSUER_CLIENT_SECRET,
      redirect_uris: [ISSUER_REDIRECT_URI],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    },
  ],
  scopes: ['openid', 'profile', 'email', 'org'],
  claims: { openid: ['sub'], profile: ['name'], email: ['email'], org: ['org', 'permissions'] },
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => claimsOf(id) }),
  pkce: { required: () => true },
  cookies: { keys: [ISSUER_CLIENT_SECRET] },
  features: { devInteractions: { enabled: true } },
});
provider.proxy = false;
server.on('request', provider.callback());
process.stdout.write(`ISSUER ${issuer}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
